import Primitives

/// The protocol side of one WebSocket connection after the handshake: bytes in, actions out (RFC 6455 §5–§7).
///
/// The transport feeds every received byte to ``bytesReceived(_:into:)`` in whatever pieces the socket produced and
/// performs the returned actions in order; it sends what ``encodeMessage(_:opcode:)``, ``close(code:reason:)`` and
/// ``ping(_:)`` return. Nothing here touches a socket, a clock or a queue, so every rule is testable in memory.
///
/// Frames are parsed incrementally without buffering whole frames: payload bytes are unmasked straight into the
/// message being reassembled (or into the inflater, then the message), so a text message is UTF-8 validated and
/// size-limited byte by byte and the connection fails at the first bad byte (§8.1), even mid-frame.
///
/// Failures become close codes only through ``WebSocketProtocolError/closeCode``. After failing, the machine emits
/// the close frame (if it had not sent one) and ``Action/closeConnection(_:)``, then ignores further input; the
/// transport closes the socket once the queued bytes are flushed. A server closes the TCP connection after the close
/// handshake (§7.1.1); a client gets the same action and may close too, since the server will have closed already.
///
/// Memory between messages is a few machine words: buffers are released once a message or control frame has been
/// handed out, and compressed input is unmasked through a bounded stack buffer.
///
/// The state machine is a value owned by the connection's queue; it holds a reference to the (non-Sendable) codec,
/// so it is not Sendable either.
public struct WebSocketConnectionStateMachine {
    /// Which end of the connection this is; it decides the masking rules (§5.1).
    public enum Role: Sendable, Hashable {
        /// Receives masked frames and sends unmasked ones.
        case server
        /// Receives unmasked frames and sends masked ones.
        case client
    }

    /// Where the close handshake stands (§7).
    public enum State: Sendable, Hashable {
        /// Messages flow both ways.
        case open
        /// This side sent a close frame and awaits the peer's; received data frames are discarded (§5.5.1).
        case closing
        /// The close handshake finished or the connection failed; input is ignored.
        case closed
    }

    /// Something the transport must do, in order.
    public enum Action {
        /// A complete data message for the application.
        case message(WebSocketMessage)
        /// Bytes to write: a pong, a close reply, or the close frame that fails the connection.
        case send([UInt8])
        /// Close the socket after flushing everything queued before this action.
        case closeConnection(WebSocketClosure)
    }

    // The stored properties are ordered by size, so that they pack without padding: every open connection holds
    // one machine.

    /// Receive limits; exceeding one fails the connection with 1009.
    public let limits: WebSocketLimits
    /// The negotiated per-message extension, if any; RSV1 is accepted only when present.
    public let codec: (any WebSocketMessageCodec)?

    // MARK: Frame parsing state

    /// Header bytes carried over when a header is split across reads (empty on the fast path).
    private var partialHeader: [UInt8] = []
    /// The frame whose payload is being received, if a header has been parsed.
    private var currentFrame: FrameInProgress?

    // MARK: Message reassembly state (stored unwrapped so appends never copy the buffer)

    /// Payload of the message in progress (decompressed).
    private var messagePayload: [UInt8] = []
    /// Payload of the control frame in progress (at most 125 bytes).
    private var controlPayload: [UInt8] = []
    /// Validator for a text message in progress.
    private var utf8 = UTF8Validator()
    /// Kind of the data message in progress, or `nil` between messages.
    private var messageKind: MessageKind?
    /// Whether the message in progress is compressed (RSV1 on its first frame).
    private var messageIsCompressed = false
    /// This end's role.
    public let role: Role
    /// Close-handshake state.
    public private(set) var state: State = .open

    /// Largest piece of masked compressed payload unmasked at once on the stack before inflating.
    private static let unmaskChunkBytes = 4096

    /// Creates the state machine for a connection whose handshake just completed.
    /// - Parameters:
    ///   - role: Server or client; decides the masking rules.
    ///   - limits: Receive limits.
    ///   - codec: The per-message extension negotiated in the handshake, if any.
    public init(role: Role, limits: WebSocketLimits = WebSocketLimits(), codec: (any WebSocketMessageCodec)? = nil) {
        self.role = role
        self.limits = limits
        self.codec = codec
    }

    // MARK: - Input

    /// Consumes received bytes and appends the resulting actions to `actions`.
    ///
    /// Bytes may be split anywhere. Passing an action buffer that the caller reuses avoids an allocation per read.
    public mutating func bytesReceived(_ bytes: UnsafeRawBufferPointer, into actions: inout [Action]) {
        _ = bytesReceived(bytes, into: &actions, stoppingAfterMessage: false)
    }

    /// Consumes received bytes up to the end of the first complete data message (or all of them) and appends the
    /// resulting actions to `actions`; returns how many bytes it consumed. The caller feeds the rest again after
    /// acting on the message.
    ///
    /// A server that answers each message at once (an echo, a request) thereby sends its answer before the
    /// machine reads a bad frame behind it and fails the connection: the answers to the valid messages before
    /// the bad frame still go out, ahead of the close frame, instead of being refused as data after Close.
    public mutating func bytesReceived(
        _ bytes: UnsafeRawBufferPointer, into actions: inout [Action], stoppingAfterMessage: Bool
    ) -> Int {
        var index = 0
        do {
            while state != .closed {
                let actionsBefore = actions.count
                if var frame = currentFrame {
                    currentFrame = nil
                    try receivePayload(of: &frame, from: bytes, at: &index)
                    if frame.remaining > 0 {
                        currentFrame = frame
                        return index
                    }
                    try finish(frame, actions: &actions)
                } else {
                    guard index < bytes.count, let header = readHeader(from: bytes, at: &index) else { return index }
                    let frame = try startFrame(header)
                    if frame.remaining > 0 {
                        currentFrame = frame
                    } else {
                        try finish(frame, actions: &actions)
                    }
                }
                if stoppingAfterMessage, actions.count > actionsBefore, case .message = actions[actions.count - 1] {
                    return index
                }
            }
        } catch {
            fail(error, actions: &actions)
        }
        return bytes.count
    }

    /// Consumes received bytes and returns the resulting actions.
    public mutating func bytesReceived(_ bytes: UnsafeRawBufferPointer) -> [Action] {
        var actions: [Action] = []
        bytesReceived(bytes, into: &actions)
        return actions
    }

    /// Consumes received bytes and returns the resulting actions.
    public mutating func bytesReceived(_ bytes: [UInt8]) -> [Action] {
        bytes.withUnsafeBytes { bytesReceived($0) }
    }

    // MARK: - Output

    /// Encodes a whole message as one frame, compressed when an extension is negotiated and its codec chooses to;
    /// client frames get a fresh random mask.
    /// - Returns: The frame bytes, or an empty array once this side has sent a close frame (§5.5.1: no data after
    ///   Close).
    public mutating func encodeMessage(_ payload: UnsafeRawBufferPointer, opcode: WebSocketOpcode) -> [UInt8] {
        precondition(opcode == .text || opcode == .binary, "messages are text or binary")
        guard state == .open else { return [] }
        let maskingKey = role == .client ? WebSocketMaskingKey.random() : nil
        if let codec, let encoded = codec.encode(payload) {
            return WebSocketFrameEncoder.encode(opcode: opcode, payload: encoded, rsv1: true, maskingKey: maskingKey)
        }
        return WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, maskingKey: maskingKey)
    }

    /// Encodes a whole message as one frame; see ``encodeMessage(_:opcode:)-(UnsafeRawBufferPointer,_)``.
    public mutating func encodeMessage(_ payload: [UInt8], opcode: WebSocketOpcode) -> [UInt8] {
        payload.withUnsafeBytes { encodeMessage($0, opcode: opcode) }
    }

    /// Starts the close handshake (§7.1.2): returns the close frame to send and moves to ``State/closing``.
    ///
    /// Typical codes: 1000 normal, 1001 server shutdown, 1008 or 1011 for a slow consumer. The reason is cut to the
    /// 123 bytes a control frame leaves for it, at a character boundary. The transport should close the socket if
    /// the peer does not answer within its close timeout.
    /// - Returns: The close frame, or an empty array if a close frame was already sent or the connection is closed.
    public mutating func close(code: WebSocketCloseCode, reason: String = "") -> [UInt8] {
        guard state == .open else { return [] }
        state = .closing
        releaseMessage()
        // The rest of a data frame already under way is discarded like any later data frame.
        if var frame = currentFrame, case .message = frame.destination {
            frame.destination = .discard
            currentFrame = frame
        }
        return makeCloseFrame(code: code, reason: reason)
    }

    /// A ping frame for idle-connection probing (§5.5.2); the peer answers with a pong carrying the same payload.
    /// - Parameter payload: At most 125 bytes of application data.
    /// - Returns: The frame, or an empty array unless the connection is open.
    public func ping(_ payload: [UInt8] = []) -> [UInt8] {
        precondition(payload.count <= 125, "control frame payloads are limited to 125 bytes")
        guard state == .open else { return [] }
        return WebSocketFrameEncoder.encode(opcode: .ping, payload: payload, maskingKey: outboundMaskingKey())
    }

    // MARK: - Frame header

    /// What kind of data message is being reassembled.
    private enum MessageKind {
        case text
        case binary
    }

    /// Where a frame's payload goes.
    private enum PayloadDestination {
        /// Into ``controlPayload``; handled when complete.
        case control(WebSocketOpcode)
        /// Into the message in progress; `fin` ends the message.
        case message(fin: Bool)
        /// Nowhere: data received after this side sent its close frame.
        case discard
    }

    /// A frame whose header has been validated and whose payload is still arriving.
    private struct FrameInProgress {
        var destination: PayloadDestination
        var maskingKey: WebSocketMaskingKey?
        /// Payload bytes received so far; also the masking offset of the next byte.
        var received: Int
        var remaining: Int
    }

    /// The fields of a frame header exactly as they appear on the wire, before validation.
    private struct WireHeader {
        var fin: Bool
        var rsv1: Bool
        var rsv2: Bool
        var rsv3: Bool
        var opcode: UInt8
        var maskingKey: WebSocketMaskingKey?
        var payloadLength: UInt64

        /// Header size implied by the first two bytes.
        static func size(first: UInt8, second: UInt8) -> Int {
            let lengthBytes: Int
            switch second & 0x7F {
            case 126: lengthBytes = 2
            case 127: lengthBytes = 8
            default: lengthBytes = 0
            }
            return 2 + lengthBytes + (second & 0x80 != 0 ? 4 : 0)
        }

        /// Decodes a complete header; `bytes.count` must equal ``size(first:second:)``.
        init(_ bytes: UnsafeRawBufferPointer) {
            let first = bytes[0]
            let second = bytes[1]
            fin = first & 0x80 != 0
            rsv1 = first & 0x40 != 0
            rsv2 = first & 0x20 != 0
            rsv3 = first & 0x10 != 0
            opcode = first & 0x0F
            var index = 2
            switch second & 0x7F {
            case 126:
                payloadLength = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
                index = 4
            case 127:
                payloadLength = 0
                for offset in 2..<10 {
                    payloadLength = payloadLength << 8 | UInt64(bytes[offset])
                }
                index = 10
            default:
                payloadLength = UInt64(second & 0x7F)
            }
            maskingKey =
                second & 0x80 != 0
                ? WebSocketMaskingKey(bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3]) : nil
        }
    }

    /// Returns the next header once all its bytes are available, consuming them; carries partial headers over.
    private mutating func readHeader(from bytes: UnsafeRawBufferPointer, at index: inout Int) -> WireHeader? {
        let available = bytes.count - index
        if partialHeader.isEmpty && available >= 2 {
            let size = WireHeader.size(first: bytes[index], second: bytes[index + 1])
            if available >= size {
                let header = WireHeader(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + size)]))
                index += size
                return header
            }
        }
        while partialHeader.count < 2 && index < bytes.count {
            partialHeader.append(bytes[index])
            index += 1
        }
        guard partialHeader.count >= 2 else { return nil }
        let size = WireHeader.size(first: partialHeader[0], second: partialHeader[1])
        let take = min(size - partialHeader.count, bytes.count - index)
        partialHeader.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
        index += take
        guard partialHeader.count == size else { return nil }
        let header = partialHeader.withUnsafeBytes { WireHeader($0) }
        partialHeader = []
        return header
    }

    /// Validates a header against §5 and the connection's state and decides where its payload goes.
    private mutating func startFrame(_ header: WireHeader) throws(WebSocketProtocolError) -> FrameInProgress {
        guard let opcode = WebSocketOpcode(rawValue: header.opcode) else {
            throw .reservedOpcode(header.opcode)
        }
        // RSV1 is permessage-deflate's "compressed" bit, valid only on the first frame of a data message (RFC 7692 §6).
        let startsDataMessage = opcode == .text || opcode == .binary
        guard !header.rsv2, !header.rsv3, !header.rsv1 || (codec != nil && startsDataMessage) else {
            throw .reservedBitsSet
        }
        guard (header.maskingKey != nil) == (role == .server) else {
            throw .maskingRuleViolated(expectedMasked: role == .server)
        }
        guard header.payloadLength >> 63 == 0 else { throw .invalidPayloadLength }

        let destination: PayloadDestination
        if opcode.isControl {
            guard header.fin else { throw .fragmentedControlFrame }
            guard header.payloadLength <= 125 else { throw .controlFrameTooLong(payloadCount: Int(header.payloadLength)) }
            destination = .control(opcode)
        } else {
            guard header.payloadLength <= UInt64(limits.maxFrameBytes) else {
                throw .frameTooLarge(limit: limits.maxFrameBytes)
            }
            if state == .closing {
                destination = .discard
            } else {
                if opcode == .continuation {
                    guard messageKind != nil else { throw .unexpectedContinuation }
                } else {
                    guard messageKind == nil else { throw .expectedContinuation }
                    messageKind = opcode == .text ? .text : .binary
                    messageIsCompressed = header.rsv1
                }
                // Uncompressed sizes are known from the header: refuse before reading the payload.
                if !messageIsCompressed
                    && UInt64(messagePayload.count) + header.payloadLength > UInt64(limits.maxMessageBytes)
                {
                    throw .messageTooLarge(limit: limits.maxMessageBytes)
                }
                destination = .message(fin: header.fin)
            }
        }
        // Bounded above by maxFrameBytes or 125, so the conversion cannot trap.
        let length = Int(header.payloadLength)
        return FrameInProgress(destination: destination, maskingKey: header.maskingKey, received: 0, remaining: length)
    }

    // MARK: - Payload

    /// Moves as much of the current frame's payload as `bytes` holds to its destination.
    private mutating func receivePayload(
        of frame: inout FrameInProgress, from bytes: UnsafeRawBufferPointer, at index: inout Int
    ) throws(WebSocketProtocolError) {
        let take = min(frame.remaining, bytes.count - index)
        guard take > 0 else { return }
        let piece = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)])
        switch frame.destination {
        case .control:
            Self.appendUnmasked(piece, to: &controlPayload, key: frame.maskingKey, payloadOffset: frame.received)
        case .message:
            if messageIsCompressed {
                try decodeCompressed(piece, key: frame.maskingKey, payloadOffset: frame.received, isFinal: false)
            } else {
                let before = messagePayload.count
                Self.appendUnmasked(piece, to: &messagePayload, key: frame.maskingKey, payloadOffset: frame.received)
                try validateText(from: before)
            }
        case .discard:
            break
        }
        frame.received += take
        frame.remaining -= take
        index += take
    }

    /// Appends `piece` to `buffer`, unmasking the appended bytes in place.
    private static func appendUnmasked(
        _ piece: UnsafeRawBufferPointer, to buffer: inout [UInt8], key: WebSocketMaskingKey?, payloadOffset: Int
    ) {
        let before = buffer.count
        buffer.append(contentsOf: piece)
        guard let key else { return }
        buffer.withUnsafeMutableBytes { all in
            key.apply(to: UnsafeMutableRawBufferPointer(rebasing: all[before...]), payloadOffset: payloadOffset)
        }
    }

    /// Feeds compressed payload to the codec (unmasking through a bounded stack buffer) and validates its output.
    private mutating func decodeCompressed(
        _ piece: UnsafeRawBufferPointer, key: WebSocketMaskingKey?, payloadOffset: Int, isFinal: Bool
    ) throws(WebSocketProtocolError) {
        guard let codec else { throw .reservedBitsSet }  // unreachable: RSV1 is refused without a codec
        let limit = limits.maxMessageBytes
        guard let key else {
            let before = messagePayload.count
            try codec.decode(piece, isFinal: isFinal, into: &messagePayload, maxOutputCount: limit)
            try validateText(from: before)
            return
        }
        var offset = 0
        var failure: WebSocketProtocolError?
        withUnsafeTemporaryAllocation(byteCount: Self.unmaskChunkBytes, alignment: 8) { scratch in
            while offset < piece.count && failure == nil {
                let count = min(Self.unmaskChunkBytes, piece.count - offset)
                let chunk = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<count])
                chunk.copyMemory(from: UnsafeRawBufferPointer(rebasing: piece[offset..<(offset + count)]))
                key.apply(to: chunk, payloadOffset: payloadOffset + offset)
                let before = messagePayload.count
                do throws(WebSocketProtocolError) {
                    try codec.decode(
                        UnsafeRawBufferPointer(chunk), isFinal: false, into: &messagePayload, maxOutputCount: limit)
                    try validateText(from: before)
                } catch {
                    failure = error
                }
                offset += count
            }
        }
        if let failure { throw failure }
    }

    /// Validates the text bytes appended since `start` (no-op for binary messages).
    private mutating func validateText(from start: Int) throws(WebSocketProtocolError) {
        guard messageKind == .text, start < messagePayload.count else { return }
        let valid = messagePayload.withUnsafeBytes { all in
            utf8.validate(UnsafeRawBufferPointer(rebasing: all[start...]))
        }
        guard valid else { throw .invalidUTF8InTextMessage }
    }

    // MARK: - Complete frames

    /// Acts on a frame whose payload is complete.
    private mutating func finish(_ frame: FrameInProgress, actions: inout [Action]) throws(WebSocketProtocolError) {
        switch frame.destination {
        case .control(let opcode):
            let payload = controlPayload
            controlPayload = []
            try handleControlFrame(opcode, payload: payload, actions: &actions)
        case .message(let fin):
            guard fin else { return }
            try finishMessage(actions: &actions)
        case .discard:
            break
        }
    }

    /// Ends the message in progress: flushes the decoder, checks the text is complete, and delivers it.
    private mutating func finishMessage(actions: inout [Action]) throws(WebSocketProtocolError) {
        if messageIsCompressed {
            try decodeCompressed(UnsafeRawBufferPointer(start: nil, count: 0), key: nil, payloadOffset: 0, isFinal: true)
        }
        let payload = messagePayload
        let kind = messageKind
        // A sequence cut off by the end of the message can only be detected here.
        let textIsComplete = utf8.isComplete
        releaseMessage()
        switch kind {
        case .text:
            guard textIsComplete else { throw .invalidUTF8InTextMessage }
            actions.append(.message(.text(payload)))
        case .binary:
            actions.append(.message(.binary(payload)))
        case nil:
            break
        }
    }

    /// Answers pings, ignores pongs, and runs the close handshake (§5.5).
    private mutating func handleControlFrame(
        _ opcode: WebSocketOpcode, payload: [UInt8], actions: inout [Action]
    ) throws(WebSocketProtocolError) {
        switch opcode {
        case .ping:
            guard state == .open else { return }
            let pong = WebSocketFrameEncoder.encode(opcode: .pong, payload: payload, maskingKey: outboundMaskingKey())
            actions.append(.send(pong))
        case .close:
            let (code, reason) = try Self.parseClosePayload(payload)
            if state == .open {
                // Echo the peer's code (§5.5.1), or send an empty close if it sent none.
                actions.append(.send(makeCloseFrame(code: code, reason: "")))
            }
            let initiatedLocally = state == .closing
            state = .closed
            releaseMessage()
            actions.append(
                .closeConnection(
                    .handshakeCompleted(peerCode: code, peerReason: reason, initiatedLocally: initiatedLocally)))
        default:
            break  // pong: unsolicited pongs are allowed and need no answer (§5.5.3)
        }
    }

    /// Splits a close payload into code and reason, enforcing §5.5.1 and §7.4.
    private static func parseClosePayload(
        _ payload: [UInt8]
    ) throws(WebSocketProtocolError) -> (WebSocketCloseCode?, String) {
        guard !payload.isEmpty else { return (nil, "") }
        guard payload.count >= 2 else { throw .closePayloadTooShort }
        let code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isAllowedOnTheWire else { throw .invalidCloseCode(code.rawValue) }
        let reason = payload[2...]
        guard UTF8Validator.isValid(Array(reason)) else { throw .invalidUTF8InCloseReason }
        return (code, String(decoding: reason, as: UTF8.self))
    }

    // MARK: - Helpers

    /// Fails the connection (§7.1.7): sends a close frame unless one was sent already, then asks for the socket to
    /// be closed and ignores all further input.
    private mutating func fail(_ error: WebSocketProtocolError, actions: inout [Action]) {
        if state == .open {
            actions.append(.send(makeCloseFrame(code: error.closeCode, reason: error.closeReason)))
        }
        state = .closed
        currentFrame = nil
        partialHeader = []
        controlPayload = []
        releaseMessage()
        actions.append(.closeConnection(.failed(error)))
    }

    /// Forgets the message in progress and releases its buffer.
    private mutating func releaseMessage() {
        messageKind = nil
        messageIsCompressed = false
        messagePayload = []
        utf8.reset()
    }

    private func outboundMaskingKey() -> WebSocketMaskingKey? {
        role == .client ? WebSocketMaskingKey.random() : nil
    }

    /// A close frame with `code` (none if `nil`) and `reason` cut to fit the 125-byte control payload.
    private func makeCloseFrame(code: WebSocketCloseCode?, reason: String) -> [UInt8] {
        var payload: [UInt8] = []
        if let code {
            payload = [UInt8(truncatingIfNeeded: code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
            var room = 123
            for scalar in reason.unicodeScalars {
                guard scalar.utf8.count <= room else { break }
                payload.append(contentsOf: scalar.utf8)
                room -= scalar.utf8.count
            }
        }
        return WebSocketFrameEncoder.encode(opcode: .close, payload: payload, maskingKey: outboundMaskingKey())
    }
}
