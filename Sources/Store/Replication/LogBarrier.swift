/// An entry that marks a position of the log and changes nothing: `'B'` and the name of the node that appended it.
///
/// A node learns the log's head by appending one: the log acknowledges an append only once it is stored for good
/// (in JetStream, committed by a majority of the stream's servers), at a position after every entry acknowledged
/// before. A head read from a server's state instead can be behind: a server cut off from the others, or a deposed
/// leader that still believes it leads, answers from its own copy. Every replica skips a barrier alike.
public enum LogBarrier {
    private static let magic: UInt8 = 0x42

    /// The barrier of `node`.
    public static func payload(node: String) -> [UInt8] {
        [magic] + Array(node.utf8)
    }

    /// The node that appended `payload` when it is a barrier, `nil` otherwise.
    static func node(of payload: [UInt8]) -> String? {
        guard payload.first == magic else { return nil }
        return String(decoding: payload.dropFirst(), as: UTF8.self)
    }
}
