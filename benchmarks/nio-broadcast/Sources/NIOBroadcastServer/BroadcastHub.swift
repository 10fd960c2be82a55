import NIOCore
import NIOPosix
import NIOWebSocket

/// Messages received during one read batch of one connection, ready to be written to every member.
enum BroadcastBatch: Sendable {
    /// Whole encoded frames (header and payload); every member writes the same buffers.
    case encoded([ByteBuffer])
    /// Unmasked frames that every member writes through its own `WebSocketFrameEncoder`.
    case frames([WebSocketFrame])
}

/// The set of `/broadcast` connections, split by event loop so that each loop only touches its own members.
///
/// A batch published on loop A is delivered directly to A's members and handed to every other loop with one
/// `execute` per loop, so there is one hop per loop per read batch, not one per connection.
final class BroadcastHub: Sendable {
    /// The members that live on one event loop.
    private struct Room: Sendable {
        let loop: any EventLoop
        let members: NIOLoopBoundBox<LoopMembers>
    }

    private let rooms: [Room]
    /// How messages are encoded for their recipients.
    let encoding: BroadcastEncoding

    init(group: MultiThreadedEventLoopGroup, encoding: BroadcastEncoding) {
        self.encoding = encoding
        self.rooms = group.makeIterator().map { loop in
            Room(loop: loop, members: .makeBoxSendingValue(LoopMembers(), eventLoop: loop))
        }
    }

    /// The members registry of `loop`; must be called on `loop`.
    func members(on loop: any EventLoop) -> LoopMembers {
        for room in rooms where room.loop === loop {
            return room.members.value
        }
        preconditionFailure("event loop \(loop) is not part of the hub's group")
    }

    /// Turns the frames of one read batch into what every member will write.
    func makeBatch(_ frames: [WebSocketFrame], allocator: ByteBufferAllocator) -> BroadcastBatch {
        switch encoding {
        case .perConnection:
            return .frames(frames)
        case .shared:
            return .encoded(frames.map { Self.encode($0, allocator: allocator) })
        }
    }

    /// Delivers `batch` to every member on every loop; must be called on `loop`.
    func publish(_ batch: BroadcastBatch, from loop: any EventLoop) {
        for room in rooms {
            if room.loop === loop {
                room.members.value.deliver(batch)
            } else {
                let members = room.members
                room.loop.execute { members.value.deliver(batch) }
            }
        }
    }

    /// Encodes an unmasked server frame (RFC 6455 §5.2) into one buffer.
    private static func encode(_ frame: WebSocketFrame, allocator: ByteBufferAllocator) -> ByteBuffer {
        let payload = frame.data
        let length = payload.readableBytes
        var buffer = allocator.buffer(capacity: 10 + length)
        buffer.writeInteger((frame.fin ? 0x80 : 0) | UInt8(webSocketOpcode: frame.opcode))
        if length <= 125 {
            buffer.writeInteger(UInt8(length))
        } else if length <= 0xFFFF {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
        buffer.writeImmutableBuffer(payload)
        return buffer
    }
}

/// The `/broadcast` connections of one event loop; only ever touched on that loop.
final class LoopMembers {
    private var handlers: [BroadcastHandler] = []

    /// Adds a connection; O(1).
    func add(_ handler: BroadcastHandler) {
        handler.slot = handlers.count
        handlers.append(handler)
    }

    /// Removes a connection if present; O(1) (the last member moves into its slot).
    func remove(_ handler: BroadcastHandler) {
        let slot = handler.slot
        guard slot >= 0, slot < handlers.count, handlers[slot] === handler else { return }
        let last = handlers.removeLast()
        if slot < handlers.count {
            handlers[slot] = last
            last.slot = slot
        }
        handler.slot = -1
    }

    /// Writes `batch` to every member and flushes each once.
    func deliver(_ batch: BroadcastBatch) {
        for handler in handlers {
            handler.send(batch)
        }
    }
}
