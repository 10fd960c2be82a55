import DataModel
import HTTPServer
import Primitives
import WebSocket
import Wire

/// One push of a view, encoded once: the bytes for each distinct ``DeliveryFormat`` among the view's listens.
///
/// The wire JSON is written once (``EncodedPush``); per tag only the few closing bytes differ, and each tag's bytes
/// are built once and shared by every connection listening with that tag (default listens share them). A push is
/// one chunk per format: a message split into several frames has them back to back, so a delivery hands the
/// transport one chunk whatever the size. Frames are uncompressed, so they are valid on every connection whether
/// or not it negotiated permessage-deflate. Event streams share one chunk of events (``ServerSentEvents``).
final class PushFrames: Sendable {
    /// The view's sequence number of this push.
    let sequence: UInt64
    private let chunks: [DeliveryFormat: ByteChunk]

    init(_ content: PushContent, formats: [DeliveryFormat], at location: Path, sequence: UInt64) {
        self.sequence = sequence
        var encoded: EncodedPush?
        var chunks: [DeliveryFormat: ByteChunk] = [:]
        for format in formats {
            switch format {
            case .wire(let tag):
                let push = encoded ?? EncodedPush(content)
                encoded = push
                // A message needing more than 9,999 frames cannot be sent (iOS reads at most 4 count digits); the
                // listens get nothing for it rather than a broken stream.
                guard let pieces = try? push.frames(tag: tag) else { continue }
                chunks[format] = WebSocketSession.encodeSharedFrames(pieces.map { .text($0) })
            case .eventStream:
                let events = ServerSentEvents.events(for: content, at: location)
                if !events.isEmpty { chunks[format] = ResponseStream.encodeSharedChunk(events) }
            }
        }
        self.chunks = chunks
    }

    /// Number of format variants encoded (what "encoded once" counts).
    var encodedCount: Int { chunks.count }

    /// The bytes for a listen receiving `format`; `nil` when it gets nothing for this push.
    func chunk(for format: DeliveryFormat) -> ByteChunk? {
        chunks[format]
    }
}

extension EncodedPush {
    /// The wire push of a view's change.
    init(_ content: PushContent) {
        switch content {
        case .data(let path, let node): self.init(path: path, data: node)
        case .merge(let path, let changes): self.init(path: path, changes: changes)
        }
    }
}
