import NIOCore
import NIOWebSocket

/// What a handler does with a received frame after the shared control-frame handling.
enum FrameDisposition {
    /// A data frame (text, binary or continuation) the endpoint should process.
    case data
    /// A control frame that was fully handled here (ping answered, pong ignored, close answered).
    case handled
}

/// Control-frame handling shared by both endpoints (RFC 6455 §5.5): ping → pong, close → echo the code and close.
enum WebSocketControl {
    /// Handles control frames and reports whether `frame` is a data frame for the caller.
    static func handle(_ frame: WebSocketFrame, context: ChannelHandlerContext) -> FrameDisposition {
        switch frame.opcode {
        case .text, .binary, .continuation:
            return .data
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(NIOAny(pong), promise: nil)
            return .handled
        case .pong:
            return .handled
        case .connectionClose:
            var payload = frame.unmaskedData
            let code = payload.readSlice(length: 2) ?? ByteBuffer()
            let reply = WebSocketFrame(fin: true, opcode: .connectionClose, data: code)
            let channel = context.channel
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(NIOAny(reply), promise: written)
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            return .handled
        default:
            context.close(promise: nil)
            return .handled
        }
    }
}
