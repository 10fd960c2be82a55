import HTTPServer
import Primitives
import Testing
import WebSocket

@Suite("Shared fan-out frames")
struct SharedFrameTests {
    @Test("several messages encode back to back in one chunk, byte for byte their frames in order")
    func framesBackToBack() {
        let messages: [WebSocketMessage] = [
            .text(Array("first".utf8)), .binary([UInt8](repeating: 7, count: 300)), .text(Array(repeating: 0x61, count: 70_000)),
        ]
        let expected = messages.flatMap { WebSocketSession.encodeSharedFrame($0).array }
        #expect(WebSocketSession.encodeSharedFrames(messages).array == expected)
        #expect(WebSocketSession.encodeSharedFrames([messages[0]]).array == WebSocketSession.encodeSharedFrame(messages[0]).array)
    }
}
