import Primitives
import Transport
import WebSocket

/// Sessions of the broadcast benchmark endpoint, kept per event loop and touched only on that loop.
///
/// Publishing batches per read pass: frames published while a loop handles one read batch are
/// collected in that loop's outbox and handed to every loop in one block at the end of the pass,
/// so a subscriber receives the whole batch in one `writev` (the fan-out shape the gateway uses).
final class BroadcastHub: Sendable {
    /// One member list per loop, each owned by its loop's queue.
    private let members: [LoopBound<[ObjectIdentifier: WebSocketSession]>]
    /// Frames published during the current pass of each loop, owned by that loop.
    private let outboxes: [LoopBound<[ByteChunk]>]
    private let group: EventLoopGroup

    init(group: EventLoopGroup) {
        self.group = group
        self.members = group.loops.map { LoopBound([:], loop: $0) }
        self.outboxes = group.loops.map { LoopBound([], loop: $0) }
    }

    func join(_ session: WebSocketSession) {
        members[session.loop.index].value[ObjectIdentifier(session)] = session
    }

    func leave(_ session: WebSocketSession) {
        members[session.loop.index].value[ObjectIdentifier(session)] = nil
    }

    /// Encodes `message` once; every member on every loop receives the same bytes.
    func publish(_ message: WebSocketMessage, from loop: EventLoop) {
        let outbox = outboxes[loop.index]
        if outbox.value.isEmpty {
            loop.runAtEndOfPass { [self] in self.handOff(from: loop) }
        }
        outbox.value.append(WebSocketSession.encodeSharedFrame(message))
    }

    private func handOff(from source: EventLoop) {
        let frames = outboxes[source.index].value
        outboxes[source.index].value.removeAll(keepingCapacity: true)
        for loop in group.loops {
            let bucket = members[loop.index]
            if loop === source {
                Self.deliver(frames, to: bucket)  // flushed with the rest of this pass
            } else {
                loop.execute {
                    Self.deliver(frames, to: bucket)
                    loop.flushPending()
                }
            }
        }
    }

    private static func deliver(_ frames: [ByteChunk], to bucket: LoopBound<[ObjectIdentifier: WebSocketSession]>) {
        for session in bucket.value.values {
            for frame in frames { session.sendFrame(frame) }
        }
    }
}

/// Broadcasts every message to every broadcast session (transport benchmark; off by default).
final class BroadcastEndpoint: WebSocketSessionDelegate {
    private let hub: BroadcastHub

    init(hub: BroadcastHub) { self.hub = hub }

    func webSocketSessionDidOpen(_ session: WebSocketSession) { hub.join(session) }

    func webSocketSession(_ session: WebSocketSession, didReceive message: WebSocketMessage) {
        hub.publish(message, from: session.loop)
    }

    func webSocketSessionDidClose(_ session: WebSocketSession, reason: CloseReason) { hub.leave(session) }
}
