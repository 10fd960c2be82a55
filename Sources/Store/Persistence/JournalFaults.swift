#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A seam for tests of the store's fault handling: errors to report instead of performing the journal's
/// `write(2)` or `fdatasync(2)`. Never set in production; the store treats an injected error exactly as one from
/// the kernel.
public struct JournalFaults: Sendable {
    /// Called before each journal write; an `errno` fails it (`ENOSPC`: the disk is full).
    public var write: @Sendable () -> Int32?
    /// Called before each journal `fdatasync`; an `errno` fails it.
    public var synchronize: @Sendable () -> Int32?

    /// Faults from the two closures (each `nil` by default: no fault).
    public init(write: @escaping @Sendable () -> Int32? = { nil },
                synchronize: @escaping @Sendable () -> Int32? = { nil }) {
        self.write = write
        self.synchronize = synchronize
    }
}

/// What happened to a namespace's journal that its owner should log and count.
public enum JournalEvent: Sendable, Equatable {
    /// The disk is full: writes are refused until a retry finds space (those already applied wait, unacknowledged).
    case outOfSpace(JournalError)
    /// Space was found again: the waiting writes are durable and acknowledged, and writes are accepted.
    case spaceRecovered
    /// A write or `fdatasync` failed for another reason: the journal accepts nothing more until a restart.
    case failed(JournalError)
}

extension JournalError {
    /// Whether the error says the disk (or the user's quota) is full: a condition that passes, unlike a failed
    /// `fdatasync`, after which the state of written pages is unknown.
    var isOutOfSpace: Bool {
        guard case .systemCall(let name, _, let errno) = self, name != "fdatasync" else { return false }
        return errno == ENOSPC || errno == EDQUOT
    }
}
