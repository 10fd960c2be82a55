// libFuzzer entry for the WebSocket frame parser and connection state machine.
//
// Compiled by `scripts/fuzz websocket-frames` together with the sources of WebSocket and Primitives into one module
// (so it must not import them). The input is split into pieces at positions taken from its first bytes, so the
// fuzzer explores both frame contents and how they are split across reads; the state machine runs in the server
// role with small limits so size checks are reached quickly.

@_cdecl("LLVMFuzzerTestOneInput")
public func webSocketFrameParserFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard size >= 1 else { return 0 }
    // First byte: the split stride (1...256 bytes per read).
    let stride = Int(input[0]) + 1
    let body = UnsafeRawBufferPointer(rebasing: input[1...])
    var machine = WebSocketConnectionStateMachine(
        role: .server, limits: WebSocketLimits(maxFrameBytes: 4096, maxMessageBytes: 16384))
    var actions: [WebSocketConnectionStateMachine.Action] = []
    var offset = 0
    while offset < body.count {
        let end = min(offset + stride, body.count)
        machine.bytesReceived(UnsafeRawBufferPointer(rebasing: body[offset..<end]), into: &actions)
        offset = end
    }
    // Exercise the outbound side in whatever state the input left.
    _ = machine.encodeMessage(body, opcode: .binary)
    _ = machine.ping()
    _ = machine.close(code: .goingAway, reason: "fuzz")
    for action in actions {
        switch action {
        case .message(.text(let bytes)):
            // Invariant: delivered text is valid UTF-8.
            if !UTF8Validator.isValid(bytes) { fatalError("invalid UTF-8 delivered") }
        case .message(.binary), .send, .closeConnection:
            break
        }
    }
    return 0
}
