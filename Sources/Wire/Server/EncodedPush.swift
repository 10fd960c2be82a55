import DataModel

/// A data or merge push encoded once for fan-out to any number of listens.
///
/// Everything but the tag is shared: ``body`` is the message up to the end of its data,
/// `{"t":"d","d":{"a":"d","b":{"p":PATH,"d":DATA`, and each listen's message is ``body`` followed by its
/// ``suffix(tag:)`` — `}}}` for default listens, `,"t":TAG}}}` for tagged ones. So a view encodes a change once
/// (the expensive JSON writing) and per listen only appends a few bytes, or, with vectored writes, sends the same
/// `body` bytes plus a per-listen suffix of at most 24 bytes.
///
/// The bytes are identical to ``ServerMessage/encoded()`` of the corresponding ``ServerMessage/dataPush(path:data:tag:)``
/// or ``ServerMessage/mergePush(path:changes:tag:)``.
public struct EncodedPush: Sendable {
    /// The shared part of every listen's message.
    public let body: [UInt8]

    /// Encodes a data push (`a: "d"`) of `data` at `path`.
    public init(path: Path, data: Node) {
        var writer = JSONWriter(capacity: 64)
        writer.openPush(WireKey.dataPush, path: path)
        writer.writeExport(data)
        body = writer.bytes
    }

    /// Encodes a merge push (`a: "m"`) of `changes` under `path`.
    public init(path: Path, changes: [MergeChange]) {
        var writer = JSONWriter(capacity: 64)
        writer.openPush(WireKey.mergePush, path: path)
        writer.writeMergeChanges(changes)
        body = writer.bytes
    }

    /// The bytes that complete ``body`` for a listen: `}}}`, or `,"t":TAG}}}` for a tagged listen.
    public static func suffix(tag: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: 24)
        writer.closePush(tag: tag)
        return writer.bytes
    }

    /// The complete message for a listen with `tag` (`nil`: a default listen).
    public func message(tag: Int?) -> [UInt8] {
        var writer = JSONWriter(capacity: body.count + 24)
        writer.writeRaw(body)
        writer.closePush(tag: tag)
        return writer.bytes
    }

    /// The frames to send for a listen with `tag`: the message itself, or a count frame and pieces when it is
    /// longer than one frame (see ``FrameSplitter``).
    ///
    /// - Throws: ``WireError/tooManyFramesToSend(needed:limit:)``.
    public func frames(tag: Int?) throws(WireError) -> [[UInt8]] {
        try FrameSplitter.frames(for: message(tag: tag))
    }
}
