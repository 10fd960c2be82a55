// libFuzzer entry for the Firebase wire protocol (Sources/Wire); built by `scripts/fuzz WireProtocolFuzz`, which
// compiles this file together with Sources/Primitives, Sources/DataModel and Sources/Wire as one module (so there is
// no `import Wire` here).
//
// The first input byte chooses a piece size; the rest is a client's stream of WebSocket text frames separated by
// 0xFF bytes (a byte UTF-8 never contains). The frames go through a FrameAssembler with small limits; every message
// it completes, and the whole rest of the input as one message, is then
// - cut by FrameSplitter into pieces of the chosen size and reassembled, which must give the same bytes back;
// - parsed as a client message (as the server does) and as a server message (as test clients do): errors must carry
//   offsets inside the message and the request number the message holds; a parsed client message must re-encode
//   and parse back equal, and what the shortcut for a frequent put or merge takes it must read as the general
//   parser does.
// Any crash, sanitizer report or broken invariant (reported by trapping) is a finding.

/// Frame limits small enough for short inputs to cross them.
private let frameLimits = FrameAssembler.Limits(maxMessageBytes: 1024, maxFrameCount: 8)
/// Data limits small enough for short inputs to cross them.
private let dataLimits = DataLimits(maxDepth: 8, maxKeyBytes: 24, maxStringBytes: 96)
/// The frame separator in fuzz inputs.
private let separator: UInt8 = 0xFF

/// Traps unless `error` points inside a message of `size` bytes.
private func checkOffset(_ error: JSONError, size: Int) {
    precondition(error.offset >= 0 && error.offset <= size, "error offset \(error.offset) outside \(size) bytes")
}

/// The request number a message's envelope holds (`d.r`, a number or a digit string), read generically.
private func envelopeRequestNumber(_ message: [UInt8]) -> Int? {
    guard let envelope = try? JSONReader.readValue(message, maxNesting: 4 * JSONReader.defaultMaxNesting) else {
        return nil
    }
    switch envelope["d"]?["r"] {
    case .number(let number)?: return number.magnitude <= 9_007_199_254_740_992 ? Int(exactly: number) : nil
    case .string(let text)?: return Int(text)
    default: return nil
    }
}

/// Checks the information a wire error carries.
private func checkError(_ error: WireError, message: [UInt8]) {
    _ = error.description
    switch error {
    case .invalidJSON(let json):
        checkOffset(json, size: message.count)
    case .malformedMessage(.invalidData(_, let json)), .malformedRequest(_, .invalidData(_, let json)):
        checkOffset(json, size: message.count)
    case .invalidFrameCount, .tooManyFrames, .messageTooLarge, .tooManyFramesToSend:
        preconditionFailure("a frame error from a message parser: \(error)")
    default:
        break
    }
    if let number = error.requestNumber {
        precondition(envelopeRequestNumber(message) == number, "an error names request \(number), not the message's")
    }
}

/// `message` with an absent query object (listen, unlisten, get) written as `{}`, as the encoder writes it whenever
/// it writes a tag or a get.
private func withEmptyQueryObjects(_ message: ClientMessage) -> ClientMessage {
    guard case .request(var request) = message else { return message }
    switch request.action {
    case .listen(var listen):
        listen.queryObject = listen.queryObject ?? .object([])
        request.action = .listen(listen)
    case .unlisten(var unlisten):
        unlisten.queryObject = unlisten.queryObject ?? .object([])
        request.action = .unlisten(unlisten)
    case .get(var get):
        get.queryObject = get.queryObject ?? .object([])
        request.action = .get(get)
    default:
        break
    }
    return .request(request)
}

/// Parses `message` both ways and checks the results.
private func checkMessage(_ message: [UInt8]) {
    // The shortcut for a frequent put or merge must read what it takes as the general parser does.
    message.withUnsafeBytes { bytes in
        if let quick = ClientMessage.frequentWrite(bytes, limits: dataLimits) {
            precondition(
                (try? ClientMessage.parseAnyMessage(bytes, limits: dataLimits)) == quick,
                "the frequent-write shortcut reads a message differently from the general parser")
        }
    }
    do {
        let parsed = try ClientMessage.parse(message, limits: dataLimits)
        let encoded = parsed.encoded()
        let again: ClientMessage
        do {
            again = try ClientMessage.parse(encoded, limits: dataLimits)
        } catch {
            preconditionFailure("a re-encoded client message does not parse: \(error)")
        }
        precondition(
            withEmptyQueryObjects(again) == withEmptyQueryObjects(parsed),
            "a re-encoded client message parses different")
        precondition(again.encoded() == encoded, "re-encoding a client message is not stable")
        if case .request(let request) = parsed {
            precondition(envelopeRequestNumber(message) == request.number, "the request number differs from d.r")
        }
    } catch {
        checkError(error, message: message)
    }
    do {
        let parsed = try ServerMessage.parse(message, limits: dataLimits)
        _ = parsed.encoded()
    } catch {
        checkError(error, message: message)
    }
}

/// Splits `message` into frames of `pieceUnits` UTF-16 code units and reassembles them, which must give it back.
private func checkSplitting(_ message: [UInt8], pieceUnits: Int) {
    let frames: [[UInt8]]
    do {
        frames = try FrameSplitter.frames(for: message, maxFrameUnits: pieceUnits, maxFrameCount: 4096)
    } catch {
        return  // more pieces than allowed: the gateway answers too_big instead
    }
    let isText = UTF8Validator.isValid(message)
    for frame in frames.dropFirst(frames.count > 1 ? 1 : 0) {
        if isText {
            precondition(UTF8Validator.isValid(frame), "a piece of valid UTF-8 is not valid UTF-8")
            precondition(
                String(decoding: frame, as: UTF8.self).utf16.count <= pieceUnits || frames.count == 1,
                "a piece is longer than \(pieceUnits) UTF-16 code units")
        }
    }
    let limits = FrameAssembler.Limits(maxMessageBytes: message.count + 1, maxFrameCount: 4096)
    var assembler = FrameAssembler(limits: limits)
    var outputs: [FrameAssembler.Output] = []
    for frame in frames {
        guard let output = try? assembler.receive(frame) else {
            // A single frame that reads as a count or is too long for the assembler is not a split message.
            precondition(frames.count == 1, "the assembler refuses the splitter's frames")
            return
        }
        outputs.append(output)
    }
    if frames.count == 1, outputs != [.message(message)] { return }  // a lone frame that reads as a count or keepalive
    precondition(outputs.last == .message(message), "reassembly does not give the message back")
    precondition(!assembler.isAssembling, "the assembler still waits after the last piece")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func wireProtocolFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let pieceUnits = Int(data[0] % 64) + 2
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))

    var messages = [body]
    var assembler = FrameAssembler(limits: frameLimits)
    for frame in body.split(separator: separator, omittingEmptySubsequences: false) {
        do {
            switch try assembler.receive(Array(frame)) {
            case .keepalive:
                precondition(frame.elementsEqual([UInt8(ascii: "0")]), "a keepalive that is not \"0\"")
            case .pending(let remaining):
                precondition(remaining >= 1 && remaining <= frameLimits.maxFrameCount, "pending count out of range")
                precondition(assembler.isAssembling, "pending but not assembling")
            case .message(let message):
                precondition(message.count <= frameLimits.maxMessageBytes, "a message over the size limit")
                precondition(!assembler.isAssembling, "a message delivered while still assembling")
                messages.append(message)
            }
        } catch {
            precondition(!assembler.isAssembling, "the assembler is not idle after an error")
            switch error {
            case .invalidFrameCount(let text): precondition(text.utf8.count <= 32 * 3, "an over-long count text")
            case .tooManyFrames(let announced, let limit):
                precondition(limit == frameLimits.maxFrameCount && (announced ?? Int.max) > limit, "a bad count error")
            case .messageTooLarge(let limit): precondition(limit == frameLimits.maxMessageBytes, "a bad size error")
            default: preconditionFailure("a message error from the assembler: \(error)")
            }
        }
    }
    for message in messages {
        checkSplitting(message, pieceUnits: pieceUnits)
        checkMessage(message)
    }
    return 0
}
