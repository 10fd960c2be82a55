// libFuzzer entry for the WebSocket frame parser and connection state machine; built by
// `scripts/fuzz WebSocketFrameParserFuzz`, which compiles this file together with Sources/Primitives and
// Sources/WebSocket as one module (so there is no `import WebSocket` here).
//
// The first input byte chooses a read size (1...256); the rest is fed to a server-role state machine twice, whole
// and in pieces of that size, and both runs must produce identical actions. Delivered text must be valid UTF-8.
// The same bytes are also parsed as a Sec-WebSocket-Extensions header and as handshake header values, which are
// reachable from the network too. Any crash, sanitizer report or disagreement (reported by trapping) is a finding.
// Small limits make the size checks reachable with short inputs.

/// Limits small enough for short inputs to cross them.
private let fuzzLimits = WebSocketLimits(maxFrameBytes: 1024, maxMessageBytes: 2048)

/// A comparable rendering of actions: a tag byte followed by the action's bytes.
private func render(_ actions: [WebSocketConnectionStateMachine.Action]) -> [[UInt8]] {
    actions.map { action in
        switch action {
        case .message(.text(let bytes)):
            // Invariant: delivered text is valid UTF-8.
            precondition(UTF8Validator.isValid(bytes), "invalid UTF-8 delivered as text")
            return [1] + bytes
        case .message(.binary(let bytes)):
            return [2] + bytes
        case .send(let bytes):
            return [3] + bytes
        case .closeConnection(let closure):
            return [4] + Array(String(describing: closure).utf8)
        }
    }
}

/// Feeds `body` in pieces of `pieceSize` bytes and returns the rendered actions.
private func run(_ body: UnsafeRawBufferPointer, pieceSize: Int) -> [[UInt8]] {
    var machine = WebSocketConnectionStateMachine(role: .server, limits: fuzzLimits)
    var actions: [WebSocketConnectionStateMachine.Action] = []
    var offset = 0
    while offset < body.count {
        let end = min(offset + pieceSize, body.count)
        machine.bytesReceived(UnsafeRawBufferPointer(rebasing: body[offset..<end]), into: &actions)
        offset = end
    }
    // Exercise the outbound side in whatever state the input left.
    _ = machine.encodeMessage(UnsafeRawBufferPointer(rebasing: body.prefix(200)), opcode: .text)
    _ = machine.ping()
    _ = machine.close(code: .goingAway, reason: String(decoding: body.prefix(130), as: UTF8.self))
    return render(actions)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func webSocketFrameParserFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let pieceSize = Int(input[0]) + 1
    let body = UnsafeRawBufferPointer(rebasing: input[1...])

    let whole = run(body, pieceSize: max(body.count, 1))
    let split = run(body, pieceSize: pieceSize)
    precondition(whole == split, "actions depend on how the input was split")

    // Header parsing on the same bytes.
    let text = String(decoding: body, as: UTF8.self)
    for offer in WebSocketExtensionOffer.parse(headerLines: [text]) {
        _ = offer.headerValue
    }
    let request = WebSocketHandshakeRequest(
        method: "GET", httpVersion: (1, 1),
        headers: [
            ("Host", "h"), ("Upgrade", text), ("Connection", text), ("Sec-WebSocket-Key", text),
            ("Sec-WebSocket-Version", text), ("Origin", text), ("Sec-WebSocket-Protocol", text),
            ("Sec-WebSocket-Extensions", text),
        ])
    let configuration = WebSocketHandshakeConfiguration(
        allowedOrigins: ["https://a.example"], selectSubprotocol: { $0.first }, negotiateExtensions: { _ in nil })
    _ = WebSocketHandshake.validate(request, configuration: configuration)
    _ = Base64.decode(text)
    return 0
}
