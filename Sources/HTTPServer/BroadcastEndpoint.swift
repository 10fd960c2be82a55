import Primitives
import Transport
import WebSocket

/// Sessions of the broadcast benchmark endpoint, kept per event loop and touched only on that loop.
final class BroadcastHub: Sendable {
    /// One member list per loop, each owned by its loop's queue.
    private let members: [LoopBound<[ObjectIdentifier: WebSocketSession]>]
    private let group: EventLoopGroup

    init(group: EventLoopGroup) {
        self.group = group
        self.members = group.loops.map { LoopBound([:], loop: $0) }
    }

    func join(_ session: WebSocketSession) {
        members[session.loop.index].value[ObjectIdentifier(session)] = session
    }

    func leave(_ session: WebSocketSession) {
        members[session.loop.index].value[ObjectIdentifier(session)] = nil
    }

    /// Encodes `message` once and hands the same bytes to every member on every loop.
    func publish(_ message: WebSocketMessage) {
        let frame = WebSocketSession.encodeSharedFrame(message)
        for loop in group.loops {
            let bucket = members[loop.index]
            loop.execute {
                for session in bucket.value.values { session.sendFrame(frame) }
                loop.flushPending()
            }
        }
    }
}

/// Broadcasts every message to every broadcast session (transport benchmark; off by default).
final class BroadcastEndpoint: WebSocketSessionDelegate {
    private let hub: BroadcastHub

    init(hub: BroadcastHub) { self.hub = hub }

    func webSocketSessionDidOpen(_ session: WebSocketSession) { hub.join(session) }

    func webSocketSession(_ session: WebSocketSession, didReceive message: WebSocketMessage) {
        hub.publish(message)
    }

    func webSocketSessionDidClose(_ session: WebSocketSession, reason: CloseReason) { hub.leave(session) }
}
