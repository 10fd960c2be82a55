import DataModel
import HTTPServer
import Primitives
import WebSocket
import Wire

/// One push of a view, encoded once: the bytes for each distinct ``DeliveryFormat`` among the view's listens.
///
/// The wire JSON is written once (``EncodedPush``); per tag only the few closing bytes differ, and each tag's frames
/// are built once and shared by every connection listening with that tag (default listens share one set). Frames
/// are uncompressed, so they are valid on every connection whether or not it negotiated permessage-deflate. Event
/// streams share one set of chunks (``ServerSentEvents``).
final class PushFrames: Sendable {
    /// The view's sequence number of this push.
    let sequence: UInt64
    private let frames: [DeliveryFormat: [ByteChunk]]

    init(_ content: PushContent, formats: [DeliveryFormat], at location: Path, sequence: UInt64) {
        self.sequence = sequence
        var encoded: EncodedPush?
        var frames: [DeliveryFormat: [ByteChunk]] = [:]
        for format in formats {
            switch format {
            case .wire(let tag):
                let push = encoded ?? EncodedPush(content)
                encoded = push
                // A message needing more than 9,999 frames cannot be sent (iOS reads at most 4 count digits); the
                // listens get nothing for it rather than a broken stream.
                let pieces = (try? push.frames(tag: tag)) ?? []
                frames[format] = pieces.map { WebSocketSession.encodeSharedFrame(.text($0)) }
            case .eventStream:
                let events = ServerSentEvents.events(for: content, at: location)
                frames[format] = events.isEmpty ? [] : [ResponseStream.encodeSharedChunk(events)]
            }
        }
        self.frames = frames
    }

    /// Number of format variants encoded (what "encoded once" counts).
    var encodedCount: Int { frames.count }

    /// The bytes for a listen receiving `format`.
    func frames(for format: DeliveryFormat) -> [ByteChunk] {
        frames[format] ?? []
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
