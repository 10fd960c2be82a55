/// When journal records are forced to stable storage, and therefore when writes are acknowledged.
///
/// Every policy writes records to the operating system in batches as soon as the journal's flush queue gets to
/// them; they differ in `fdatasync`:
///
/// | Policy | `fdatasync` | A write is acknowledged after | Lost on power failure |
/// |---|---|---|---|
/// | ``always`` | after every batch (group commit) | its record is on disk | nothing acknowledged |
/// | ``interval(milliseconds:)`` | at most every N ms | its record reached the OS | up to N ms of writes |
/// | ``none`` | only at segment rotation and shutdown | its record reached the OS | whatever the OS had not written |
///
/// A process crash (SIGKILL, trap) loses no acknowledged write under any policy, because acknowledgement waits at
/// least for the `write(2)` into the page cache.
public enum FsyncPolicy: Sendable, Equatable, CustomStringConvertible {
    /// Acknowledge only after `fdatasync`; concurrent writes share one `fdatasync` (group commit). The default.
    case always
    /// `fdatasync` on a timer every `milliseconds`.
    case interval(milliseconds: Int)
    /// Never `fdatasync` while running.
    case none

    /// `always`, `interval:N` or `none`, as accepted by ``init(parsing:)``.
    public var description: String {
        switch self {
        case .always: return "always"
        case .interval(let milliseconds): return "interval:\(milliseconds)"
        case .none: return "none"
        }
    }

    /// Parses `always`, `none`, or `interval:N` with N in 1...60000 milliseconds; `nil` for anything else.
    public init?(parsing text: String) {
        switch text {
        case "always": self = .always
        case "none": self = .none
        default:
            guard text.hasPrefix("interval:"), let value = Int(text.dropFirst("interval:".count)),
                value >= 1, value <= 60_000
            else { return nil }
            self = .interval(milliseconds: value)
        }
    }
}
