import DataModel
import HTTPServer
import Primitives
import WebSocket
import Wire

/// One push of a view, encoded once: the WebSocket frames for each distinct tag among the view's listens.
///
/// The JSON is written once (``EncodedPush``); per tag only the few closing bytes differ, and each tag's frames are
/// built once and shared by every connection listening with that tag (default listens share one set). Frames are
/// uncompressed, so they are valid on every connection whether or not it negotiated permessage-deflate.
final class PushFrames: Sendable {
    /// The view's sequence number of this push.
    let sequence: UInt64
    private let frames: [Int?: [ByteChunk]]

    init(_ content: PushContent, tags: [Int?], sequence: UInt64) {
        self.sequence = sequence
        let encoded: EncodedPush
        switch content {
        case .data(let path, let node): encoded = EncodedPush(path: path, data: node)
        case .merge(let path, let changes): encoded = EncodedPush(path: path, changes: changes)
        }
        var frames: [Int?: [ByteChunk]] = [:]
        for tag in tags {
            // A message needing more than 9,999 frames cannot be sent (iOS reads at most 4 count digits); the
            // listens get nothing for it rather than a broken stream.
            let pieces = (try? encoded.frames(tag: tag)) ?? []
            frames[tag] = pieces.map { WebSocketSession.encodeSharedFrame(.text($0)) }
        }
        self.frames = frames
    }

    /// Number of tag variants encoded (what "encoded once" counts).
    var encodedCount: Int { frames.count }

    /// The frames for a listen with `tag`.
    func frames(for tag: Int?) -> [ByteChunk] {
        frames[tag] ?? []
    }
}
