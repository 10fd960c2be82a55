/// The valid records of a journal, read at start-up, and where its damage (if any) starts.
struct JournalContents: Sendable {
    /// One valid record.
    struct Entry: Sendable {
        /// Index into ``segments``.
        let segment: Int
        /// Byte offset of the record's header in its segment.
        let offset: Int
        /// The record's payload (shares the segment's bytes).
        let payload: ArraySlice<UInt8>
    }

    /// A position in the journal where valid data ends.
    struct Position: Sendable, Equatable {
        /// Index into ``segments``.
        let segment: Int
        /// Byte offset in that segment.
        let offset: Int
    }

    /// The segments, oldest first.
    let segments: [JournalSegment]
    /// The valid records in order.
    let entries: [Entry]
    /// Where a torn final write begins, when the last segment ends with one.
    let tornTail: Position?
    /// Where corruption begins, when `repair` was requested and a record in the middle was damaged (everything
    /// from there on is dropped).
    let repairedCorruption: Position?
}

/// Reads a journal.s segments and classifies damage (see ``RecordScanner/isTornTail(at:damage:)``).
enum JournalReader {
    /// Reads every segment in `directory`.
    ///
    /// Damage in the last segment that looks like a torn final write ends the journal there (``JournalContents/tornTail``).
    /// Any other damage throws ``JournalError/corrupt(file:offset:)`` naming the file and byte offset, unless
    /// `repair` is set, in which case the journal ends at the last good record before it.
    static func read(directory: String, repair: Bool) throws(JournalError) -> JournalContents {
        let segments = try JournalSegment.list(in: directory)
        var entries: [JournalContents.Entry] = []
        for (index, segment) in segments.enumerated() {
            let bytes = try FileSystem.readFile(segment.path)
            let isLast = index == segments.count - 1
            let damage: (offset: Int, torn: Bool)? = bytes.withUnsafeBytes { raw in
                var scanner = RecordScanner(bytes: raw)
                while true {
                    switch scanner.next() {
                    case .end:
                        return nil
                    case .record(let offset, let payload):
                        entries.append(JournalContents.Entry(segment: index, offset: offset, payload: bytes[payload]))
                    case .damaged(let offset, let damage):
                        return (offset, isLast && scanner.isTornTail(at: offset, damage: damage))
                    }
                }
            }
            guard let damage else { continue }
            let position = JournalContents.Position(segment: index, offset: damage.offset)
            if damage.torn {
                return JournalContents(segments: segments, entries: entries, tornTail: position, repairedCorruption: nil)
            }
            guard repair else { throw .corrupt(file: segment.path, offset: damage.offset) }
            return JournalContents(segments: segments, entries: entries, tornTail: nil, repairedCorruption: position)
        }
        return JournalContents(segments: segments, entries: entries, tornTail: nil, repairedCorruption: nil)
    }

    /// Cuts the journal at `position`: truncates that segment there and deletes every later segment, then syncs
    /// the directory. Returns the segments that remain.
    static func truncate(_ journal: JournalContents, at position: JournalContents.Position, directory: String)
        throws(JournalError) -> [JournalSegment]
    {
        let kept = Array(journal.segments[...position.segment])
        for segment in journal.segments[(position.segment + 1)...] { try FileSystem.removeFile(segment.path) }
        try FileSystem.truncate(journal.segments[position.segment].path, to: position.offset)
        try FileSystem.synchronizeDirectory(directory)
        return kept
    }
}
