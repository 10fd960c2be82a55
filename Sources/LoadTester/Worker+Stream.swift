/// Byte streams whose messages can be cut by a read or a WebSocket message boundary (MQTT packets, Redis and NATS
/// replies): the cut-off tail waits in `Connection.streamPending` for the next bytes.
extension Worker {
    /// Hands every whole message in `bytes` (after any tail kept from before) to `handle`, which returns the bytes
    /// it consumed or -1 when it dropped the connection, and keeps the rest; refuses a tail over `limit` bytes
    /// (`what` names it). Returns false when the connection was dropped.
    func streamed(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>, limit: Int, what: String,
                  _ handle: (UnsafeBufferPointer<UInt8>) -> Int) -> Bool {
        if connections[index].streamPending.isEmpty {
            let consumed = handle(bytes)
            guard consumed >= 0 else { return false }
            if consumed < bytes.count {
                connections[index].streamPending.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[consumed...]))
            }
            return connections[index].state == .open
        }
        guard connections[index].streamPending.count + bytes.count <= limit else {
            drop(index, reason: "protocol error: \(what) over \(limit) bytes")
            return false
        }
        connections[index].streamPending.append(contentsOf: bytes)
        var pending: [UInt8] = []
        swap(&pending, &connections[index].streamPending)
        let consumed = pending.withUnsafeBufferPointer { handle($0) }
        guard consumed >= 0 else { return false }
        pending.removeFirst(consumed)
        swap(&pending, &connections[index].streamPending)
        return connections[index].state == .open
    }

    /// A published message reached connection `index` on a pub/sub protocol (MQTT, Redis, NATS): the writer's own
    /// copy, a subscriber's delivery, or (unreadable, or on a connection not ready or not listening) unexpected.
    func publishedValueArrived(_ index: Int, _ value: BenchValue?) {
        guard connections[index].ready, let value else {
            if connections[index].ready { result.unexpectedPushes += 1 }
            return
        }
        switch connections[index].role {
        case .writer: ownCopyArrived(index, value)
        case .subscriber, .stalled: deliver(index, value)
        case .idle, .echo: result.unexpectedPushes += 1
        }
    }
}
