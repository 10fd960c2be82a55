import TLS
import WebSocketDeflate

/// One client connection's state; owned by one worker and addressed by its index in the worker's table.
///
/// Fixed-size fields only on the hot path: the frame scanner keeps at most one partial header, and the byte arrays
/// (`outbound`, `handshake`, `control`, `message`, `pieces`, `streamPending`) are used only on slow paths (a short
/// write, the upgrade, control frames, a message split across reads or frames). `tls` and `deflate` exist only when
/// the run asked for them.
struct Connection {
    enum State: UInt8 {
        case unused, connecting, handshaking, open, closed
    }

    var fd: Int32 = -1
    var state = State.unused
    /// The connection's global index (over all workers and processes).
    var global = 0

    // MARK: frame scanner
    /// Bytes of a frame header split across reads (at most 10: server frames are unmasked).
    var header: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var headerCount = 0
    /// Payload bytes of the current frame not yet seen.
    var payloadRemaining = 0
    /// Opcode of the current frame (RFC 6455 §5.2).
    var opcode: UInt8 = 0
    var fin = false
    /// Whether the current message is compressed (RSV1 on its first frame, RFC 7692 §6).
    var compressed = false
    /// Payload of the current control frame (ping, pong, close).
    var control: [UInt8] = []
    /// Payload length of the current data frame.
    var frameLength = 0
    /// A WebSocket message whose frames were split across reads (or fragmented, or compressed), gathered here.
    var message: [UInt8] = []

    // MARK: protocol
    var role = RunPlan.Role.idle
    /// The room a subscriber listens to, or a writer's first room.
    var room = 0
    /// Firebase: the hello has arrived. MQTT: the CONNACK has arrived.
    var helloSeen = false
    /// Upgraded and, where the protocol has them, authenticated and listening: the connection counts as open.
    var ready = false
    /// Firebase: the request number of the listen (or, for writers, of the auth) whose `ok` makes it ready.
    var readyRequest: Int64 = 0
    /// Firebase messages the server split into pieces (wire-protocol.md §2.2): pieces still to come, and the
    /// pieces so far.
    var piecesRemaining = 0
    var pieces: [UInt8] = []
    /// MQTT: the bytes of a packet that a WebSocket message cut off, until the rest arrives.
    var streamPending: [UInt8] = []
    /// The permessage-deflate codec, when negotiated.
    var deflate: PerMessageDeflateCodec?
    /// The TLS session, for `wss`.
    var tls: TLSSession?

    // MARK: workload
    /// Subscribers: the last update's writer and sequence number seen (-1 / 0: none yet).
    var lastWriter: Int64 = -1
    var lastSequence: Int64 = 0
    /// Writers: writes this writer must send, has sent, and has seen acknowledged (Firebase `ok`, or its own copy
    /// back with MQTT and raw WebSocket).
    var quota = 0
    var sent = 0
    var acknowledged = 0
    /// Firebase writers: the request number of the next write.
    var nextRequest: Int64 = 1
    /// Writers: the writer's index (which rooms it cycles through), and its ordinal among this worker's writers.
    var writerIndex = 0
    var writerSlot = 0
    /// Echo: when the message in flight was sent.
    var sentAt: UInt64 = 0
    /// The stalled subscriber: whether it is out of the epoll set (not reading), and the last time it read.
    var paused = false
    var lastRead: UInt64 = 0

    // MARK: output
    /// Bytes a short write left behind, flushed when the socket is writable again.
    var outbound: [UInt8] = []
    var outboundOffset = 0
    var wantsWritable = false
    /// The upgrade response read so far.
    var handshake: [UInt8] = []
}
