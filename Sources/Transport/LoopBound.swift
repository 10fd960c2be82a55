/// A value owned by one event loop: every access checks that it happens on that loop's queue
/// (our `NIOLoopBound`). Lets loop-owned state sit inside a `Sendable` container.
public final class LoopBound<Value>: @unchecked Sendable {
    private var storage: Value
    /// The loop that owns the value.
    public let loop: EventLoop

    /// Wraps `value`, owned by `loop`.
    public init(_ value: Value, loop: EventLoop) {
        self.storage = value
        self.loop = loop
    }

    /// The value; read and write only on ``loop``.
    public var value: Value {
        get {
            loop.assertInLoop()
            return storage
        }
        _modify {
            loop.assertInLoop()
            yield &storage
        }
    }
}
