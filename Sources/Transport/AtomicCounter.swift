import Synchronization

/// A lock-free counter shared across queues (connection ids, live-connection counts, metrics).
public final class AtomicCounter: Sendable {
    private let value = Atomic<UInt64>(0)

    /// Creates a counter at zero.
    public init() {}

    /// Adds one and returns the value before the increment.
    @discardableResult
    public func increment() -> UInt64 {
        value.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Subtracts one.
    public func decrement() {
        value.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Adds `amount`.
    public func add(_ amount: UInt64) {
        value.wrappingAdd(amount, ordering: .relaxed)
    }

    /// The current value.
    public var load: UInt64 { value.load(ordering: .relaxed) }
}
