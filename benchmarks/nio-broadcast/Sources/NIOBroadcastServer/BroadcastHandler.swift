import NIOCore
import NIOWebSocket

/// The `/broadcast` endpoint: data frames of one read batch are collected and, at `channelReadComplete`, published
/// to every `/broadcast` connection (this one included), each of which writes them and flushes once.
final class BroadcastHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Index in the loop's `LoopMembers`, or -1 when not registered.
    var slot = -1

    private let hub: BroadcastHub
    private var members: LoopMembers?
    private var context: ChannelHandlerContext?
    /// The `WebSocketFrameEncoder`'s context: a write issued from it skips the encoder and goes to the socket,
    /// which is how an already encoded frame is written.
    private var encoderContext: ChannelHandlerContext?
    /// Frames received since the last `channelReadComplete`.
    private var pending: [WebSocketFrame] = []

    init(hub: BroadcastHub) {
        self.hub = hub
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        encoderContext = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        let members = hub.members(on: context.eventLoop)
        members.add(self)
        self.members = members
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        guard case .data = WebSocketControl.handle(frame, context: context) else { return }
        pending.append(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if !pending.isEmpty {
            let batch = hub.makeBatch(pending, allocator: context.channel.allocator)
            pending.removeAll(keepingCapacity: true)
            hub.publish(batch, from: context.eventLoop)
        }
        context.fireChannelReadComplete()
    }

    /// Writes every message of `batch` to this connection and flushes once.
    func send(_ batch: BroadcastBatch) {
        switch batch {
        case .encoded(let buffers):
            guard let encoderContext else { return }
            for buffer in buffers {
                encoderContext.write(NIOAny(buffer), promise: nil)
            }
            encoderContext.flush()
        case .frames(let frames):
            guard let context else { return }
            for frame in frames {
                context.write(Self.wrapOutboundOut(frame), promise: nil)
            }
            context.flush()
        }
    }

    private func leave() {
        members?.remove(self)
        members = nil
        context = nil
        encoderContext = nil
    }
}
