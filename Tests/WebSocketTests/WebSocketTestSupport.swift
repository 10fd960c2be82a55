import Testing
import WebSocket

/// A fixed masking key, so expected client frames are reproducible.
let testMaskingKey = WebSocketMaskingKey(0x37, 0xFA, 0x21, 0x3D)

/// A frame as a client sends it (masked with ``testMaskingKey``).
func clientFrame(
    _ opcode: WebSocketOpcode, _ payload: [UInt8] = [], fin: Bool = true, rsv1: Bool = false
) -> [UInt8] {
    WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, maskingKey: testMaskingKey)
}

/// A frame as a client sends it, from text.
func clientFrame(_ opcode: WebSocketOpcode, text: String, fin: Bool = true) -> [UInt8] {
    clientFrame(opcode, Array(text.utf8), fin: fin)
}

/// A close payload: the code in network order followed by the reason bytes.
func closePayload(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
    [UInt8(code >> 8), UInt8(code & 0xFF)] + reason
}

/// A decoded frame that the state machine asked to send, with its mask removed.
struct SentFrame: Equatable, CustomStringConvertible {
    var opcode: UInt8
    var fin: Bool
    var rsv1: Bool
    var masked: Bool
    var payload: [UInt8]

    var description: String { "frame(op \(opcode), fin \(fin), rsv1 \(rsv1), masked \(masked), \(payload))" }

    /// The frame a server sends (unmasked).
    static func server(_ opcode: WebSocketOpcode, _ payload: [UInt8] = [], rsv1: Bool = false) -> SentFrame {
        SentFrame(opcode: opcode.rawValue, fin: true, rsv1: rsv1, masked: false, payload: payload)
    }

    /// Decodes exactly one complete frame (test helper; the product never decodes frames whole).
    static func decode(_ bytes: [UInt8]) -> SentFrame? {
        guard bytes.count >= 2 else { return nil }
        var index = 2
        var length = UInt64(bytes[1] & 0x7F)
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
            index = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
            index = 10
        }
        let masked = bytes[1] & 0x80 != 0
        var key: [UInt8] = []
        if masked {
            guard bytes.count >= index + 4 else { return nil }
            key = Array(bytes[index..<(index + 4)])
            index += 4
        }
        guard UInt64(bytes.count - index) == length else { return nil }
        var payload = Array(bytes[index...])
        if masked {
            for position in payload.indices { payload[position] ^= key[position % 4] }
        }
        return SentFrame(
            opcode: bytes[0] & 0x0F, fin: bytes[0] & 0x80 != 0, rsv1: bytes[0] & 0x40 != 0, masked: masked,
            payload: payload)
    }
}

/// An `Equatable` mirror of ``WebSocketConnectionStateMachine/Action`` for expectations.
enum Outcome: Equatable, CustomStringConvertible {
    case message(WebSocketMessage)
    case send(SentFrame?)
    case closeConnection(WebSocketClosure)

    init(_ action: WebSocketConnectionStateMachine.Action) {
        switch action {
        case .message(let message): self = .message(message)
        case .send(let bytes): self = .send(SentFrame.decode(bytes))
        case .closeConnection(let closure): self = .closeConnection(closure)
        }
    }

    var description: String {
        switch self {
        case .message(let message): return "message(\(message))"
        case .send(let frame): return "send(\(frame.map(String.init(describing:)) ?? "undecodable"))"
        case .closeConnection(let closure): return "closeConnection(\(closure))"
        }
    }

    static func text(_ text: String) -> Outcome { .message(.text(Array(text.utf8))) }

    /// The server's close frame followed by closing the connection, for a failure.
    static func failed(_ error: WebSocketProtocolError) -> [Outcome] {
        [
            .send(.server(.close, closePayload(error.closeCode.rawValue, Array(error.closeReason.utf8)))),
            .closeConnection(.failed(error)),
        ]
    }
}

/// Feeds `pieces` in order and returns every outcome.
func feed(_ machine: inout WebSocketConnectionStateMachine, _ pieces: [[UInt8]]) -> [Outcome] {
    var actions: [WebSocketConnectionStateMachine.Action] = []
    for piece in pieces {
        piece.withUnsafeBytes { machine.bytesReceived($0, into: &actions) }
    }
    return actions.map(Outcome.init)
}

/// The drip-feed verifier: `bytes` fed whole, one byte at a time, and split in two at every point must all produce
/// `expected` (NIO's approach to incremental parsers).
func expectDripFed(
    _ bytes: [UInt8], produce expected: [Outcome], machine make: () -> WebSocketConnectionStateMachine,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var runs: [(String, [[UInt8]])] = [("whole", [bytes]), ("byte by byte", bytes.map { [$0] })]
    for split in 1..<max(bytes.count, 1) {
        runs.append(("split at \(split)", [Array(bytes[..<split]), Array(bytes[split...])]))
    }
    for (label, pieces) in runs {
        var machine = make()
        let outcomes = feed(&machine, pieces)
        #expect(outcomes == expected, "\(label)", sourceLocation: sourceLocation)
    }
}

/// A server-role state machine with the given limits and no extension.
func serverMachine(limits: WebSocketLimits = WebSocketLimits()) -> WebSocketConnectionStateMachine {
    WebSocketConnectionStateMachine(role: .server, limits: limits)
}
