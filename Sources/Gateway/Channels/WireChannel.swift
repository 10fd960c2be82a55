import HTTPServer
import Primitives

/// What carries one ``WireSession`` to its client: its own WebSocket (``WebSocketSession``), a long-poll channel
/// (``LongPollChannel``), a WebSocket that took over a long-poll session (``UpgradedWebSocketChannel``), or a test's
/// recording.
///
/// This is the seam between the wire protocol and its transports. The session calls these methods on its loop; the
/// channel hands the session what the client sent through the session's input methods (``WireSession/open()``,
/// ``WireSession/receive(_:)``, ``WireSession/receiveFailed(_:)``, ``WireSession/drained()`` and
/// ``WireSession/closed()``), on the same loop. Every message means the same whatever carries it.
protocol WireChannel: AnyObject {
    /// Which transport this is, for the inspect endpoint.
    var transport: WireTransport { get }
    /// Whether the channel ended or is closing: whatever is sent now is dropped.
    var isClosed: Bool { get }
    /// Bytes handed to the channel that the client has not taken yet; over the conflation threshold the session
    /// conflates its listens.
    var pendingOutboundBytes: Int { get }
    /// Sends one wire message (its complete JSON). Returns `false` when the message is too large to send at all
    /// (more than the protocol's frame count allows, wire-protocol.md §2); nothing is sent then.
    func send(message: [UInt8]) -> Bool
    /// Sends one view push as encoded once for every listener: unmasked server WebSocket text frames holding one
    /// message (a count frame and pieces when it is large). Borrowed: retain it only to keep it.
    func send(sharedFrames: ByteChunk)
    /// Hands queued output to the client now when it can, so ``pendingOutboundBytes`` tells how far it is behind.
    func flushNow()
    /// Stops taking the client's messages until ``resumeReading()`` (backpressure on a pipelining client).
    func pauseReading()
    /// Takes the client's messages again.
    func resumeReading()
    /// Ends the channel; `code` and `reason` are a WebSocket close code and reason, which other transports map to
    /// their own way of ending. The session's ``WireSession/closed()`` follows.
    func close(code: UInt16, reason: String)
    /// The WebSocket this channel writes shared frames to unchanged, on the session's own loop, if it does: the
    /// fan-out path then hands pushes to it directly (no dynamic dispatch, no reference count per delivery).
    var webSocketForFanOut: WebSocketSession? { get }
}

extension WireChannel {
    var webSocketForFanOut: WebSocketSession? { nil }
}

/// The transports a wire session can travel on.
enum WireTransport: String, Sendable {
    case webSocket = "websocket"
    case longPolling = "long-polling"
}
