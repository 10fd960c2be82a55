/// One client connection's state; owned by one worker and addressed by its index in the worker's table.
///
/// Fixed-size fields only on the hot path: the frame scanner keeps at most one partial header, and the byte arrays
/// (`outbound`, `handshake`, `control`, `message`, `pieces`) are used only on slow paths (a short write, the upgrade,
/// control frames, a message split across reads or frames).
struct Connection {
    enum State: UInt8 {
        case unused, connecting, handshaking, open, closed
    }

    var fd: Int32 = -1
    var state = State.unused

    // MARK: frame scanner
    /// Bytes of a frame header split across reads (at most 10: server frames are unmasked).
    var header: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    var headerCount = 0
    /// Payload bytes of the current frame not yet seen.
    var payloadRemaining = 0
    /// Opcode of the current frame (RFC 6455 §5.2).
    var opcode: UInt8 = 0
    var fin = false
    /// Sender-tag bytes of the current message still to capture (broadcast with several senders).
    var tagBytesWanted = 0
    var tagAccumulator: UInt64 = 0
    /// Payload of the current control frame (ping, pong, close).
    var control: [UInt8] = []
    /// Firebase modes: payload length of the current frame, and whether its payload is kept (data frames).
    var frameLength = 0
    var capturing = false
    /// Firebase modes: a WebSocket message whose frames were split across reads (or fragmented), gathered here.
    var message: [UInt8] = []

    // MARK: workload
    /// Broadcast: whether this connection sends messages, and its tag.
    var isSender = false
    var senderTag: UInt64 = 0
    /// Broadcast: messages this sender must send, has sent, and has seen come back.
    var quota = 0
    var sent = 0
    var ownReceived = 0
    /// Data messages received.
    var messagesReceived = 0
    /// Echo: when the message in flight was sent.
    var sentAt: UInt64 = 0

    // MARK: Firebase workload
    var role = FirebasePlan.Role.none
    /// The room a subscriber listens to, or a writer's first room.
    var room = 0
    /// Firebase modes: the hello has arrived (and, for subscribers, the listen's `ok`): the connection is ready.
    var helloSeen = false
    var ready = false
    /// Firebase messages the server split into pieces (wire-protocol.md §2.2): pieces still to come, and the
    /// pieces so far.
    var piecesRemaining = 0
    var pieces: [UInt8] = []
    /// Subscribers: the last update's writer and sequence number seen (-1 / 0: none yet).
    var lastWriter: Int64 = -1
    var lastSequence: Int64 = 0
    /// Writers: puts acknowledged (with any status) and the request number of the next put.
    var acknowledged = 0
    var nextRequest = 1
    /// Writers: the writer's index (which rooms it cycles through).
    var writerIndex = 0
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
