/// Which Canopy this binary is: `canopy --version` prints ``description``, and the server logs it at start.
public enum CanopyVersion {
    /// The release number: the one place it is written.
    public static let number = "0.1.0"

    /// `0.1.0 (commit 0123456789ab)`, or the number alone when the build had no git work tree.
    /// (``commit`` is generated at build time by the EmbedConsole plugin.)
    public static var description: String {
        commit.map { "\(number) (commit \($0))" } ?? number
    }
}
