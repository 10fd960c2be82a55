import Dispatch

/// A value handed to exactly one other queue.
private struct HandedOver<Value>: @unchecked Sendable {
    let value: Value
}

/// Runs `work` on `queue`. The API's blocks are ordinary closures, as the SDK's are (so code written for it
/// compiles in both language modes), hence not `Sendable`; each is handed to one queue and never run concurrently
/// with itself, which is the guarantee `Sendable` would give.
func run(on queue: DispatchQueue, _ work: @escaping () -> Void) {
    let handed = HandedOver(value: work)
    queue.async { handed.value() }
}

/// Runs `work` on `queue` after `delay` seconds (see ``run(on:_:)``).
func run(on queue: DispatchQueue, after delay: Double, _ work: @escaping () -> Void) {
    let handed = HandedOver(value: work)
    queue.asyncAfter(deadline: .now() + delay) { handed.value() }
}
