/// A failed system call, tagged with its name and errno.
public struct TransportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The system call that failed.
    public let call: String
    /// The errno it set.
    public let errno: Int32

    /// Creates an error for `call` with `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call) failed: errno \(errno)" }
}
