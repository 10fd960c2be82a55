import DataModel
import Dispatch

/// A namespace as start-up recovered it: ready to become a ``Store``.
struct LoadedNamespace: Sendable {
    /// The layout of ``states`` (the configured one, unless loading read-only data written with another).
    var layout: ShardLayout
    /// Each shard's recovered state.
    var states: [ShardState]
    /// Each shard's remaining journal segments, to append to.
    var segments: [[JournalSegment]]
    /// The next multi-shard transaction id.
    var nextTransactionId: UInt64
    /// What start-up found.
    var report: LoadReport
}

/// Loads a directory of the sharded format that preceded the namespace log (for its migration, ``LogLoader``):
/// the snapshot, each shard's journal replayed after it, minus what a crash left incomplete.
///
/// 1. Read `snapshot.canopy` (a namespace without one is created with an empty snapshot recording the layout).
/// 2. Read every shard journal of the snapshot's layout. A torn final record is dropped; other damage stops
///    start-up with the file and offset (``JournalError/corrupt(file:offset:)``) unless `repair` is set.
/// 3. Skip records the snapshot covers; the rest must continue the shard's sequence without gaps.
/// 4. A multi-shard write must be in every participant's journal; one that is not (a crash between the parts'
///    writes) was never acknowledged, and neither was anything its shards journaled after it (acknowledgements
///    wait for the whole write, see ``TransactionDurability``): those shards' journals are cut at it, repeated
///    until no incomplete write remains.
/// 5. Replay the rest, shards in parallel, and truncate the files where they were cut, so appends continue after
///    the last good record.
enum NamespaceLoader {
    static func load(_ files: NamespaceFiles, configuredLayout: ShardLayout, repair: Bool, readOnly: Bool)
        throws(JournalError) -> LoadedNamespace
    {
        let started = DispatchTime.now()
        var report = LoadReport()
        if !readOnly {
            try FileSystem.makeDirectories(files.directory)
            try FileSystem.removeFile(files.temporarySnapshotPath)
        }
        let contents: SnapshotFile.Contents
        if FileSystem.exists(files.snapshotPath) {
            contents = try SnapshotFile.read(files.snapshotPath)
            report.loadedSnapshot = true
        } else {
            for shard in try files.journalShards()
            where !(try JournalSegment.list(in: files.journalDirectory(shard: shard))).isEmpty {
                throw .corruptSnapshot(file: files.snapshotPath, reason: "missing, but journal segments exist")
            }
            contents = SnapshotFile.Contents(
                layout: configuredLayout, states: Array(repeating: ShardState(), count: configuredLayout.count),
                nextTransactionId: 1)
            if !readOnly { try SnapshotFile.write(contents, to: files.snapshotPath) }
        }
        let layout = contents.layout
        try removeStrayJournals(files, layout: layout, covered: contents.states.map(\.sequence).min() ?? 0,
                                readOnly: readOnly)

        var journals: [JournalContents] = []
        var records: [[DecodedRecord]] = []
        for shard in 0..<layout.count {
            let journal = try JournalReader.read(directory: files.journalDirectory(shard: shard), repair: repair)
            journals.append(journal)
            records.append(try decode(journal, after: contents.states[shard].sequence, layout: layout))
        }
        let cuts = completeTransactionCuts(records)

        var states = contents.states
        let replay = records
        states.withUnsafeMutableBufferPointer { buffer in
            let output = UnsafeSendable(buffer)
            DispatchQueue.concurrentPerform(iterations: layout.count) { shard in
                for decoded in replay[shard][..<cuts[shard]] {
                    output.value[shard].apply(decoded.record.operations)
                    output.value[shard].sequence = decoded.record.sequence
                }
            }
        }
        var nextTransactionId = contents.nextTransactionId
        var segments: [[JournalSegment]] = []
        for shard in 0..<layout.count {
            report.replayedRecords += cuts[shard]
            for decoded in records[shard][..<cuts[shard]] {
                if let tag = decoded.record.transaction { nextTransactionId = max(nextTransactionId, tag.id + 1) }
            }
            let journal = journals[shard]
            var cut: (JournalContents.Position, LoadReport.Discard.Reason)?
            if cuts[shard] < records[shard].count {
                let decoded = records[shard][cuts[shard]]
                let entry = journal.entries[decoded.entry]
                cut = (JournalContents.Position(segment: entry.segment, offset: entry.offset),
                       .incompleteTransaction(id: decoded.record.transaction?.id ?? 0))
            } else if let torn = journal.tornTail {
                cut = (torn, .tornTail)
            } else if let corruption = journal.repairedCorruption {
                cut = (corruption, .repairedCorruption)
            }
            var remaining = journal.segments
            if let (position, reason) = cut {
                report.discards.append(LoadReport.Discard(
                    file: journal.segments[position.segment].path, offset: position.offset, reason: reason))
                if !readOnly {
                    remaining = try JournalReader.truncate(
                        journal, at: position, directory: files.journalDirectory(shard: shard))
                }
            }
            segments.append(remaining)
        }

        var loaded = LoadedNamespace(layout: layout, states: states, segments: segments,
                                     nextTransactionId: nextTransactionId, report: report)
        loaded.report.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return loaded
    }

    /// Journals of shards beyond the layout can only be left by a crash during a re-partition, after the new
    /// snapshot (which covers every old record) was written; they are deleted. Any record they hold above the
    /// snapshot's sequences means something else happened, and start-up stops.
    private static func removeStrayJournals(_ files: NamespaceFiles, layout: ShardLayout, covered: UInt64,
                                            readOnly: Bool) throws(JournalError)
    {
        for shard in try files.journalShards() where shard >= layout.count {
            let directory = files.journalDirectory(shard: shard)
            let journal = try JournalReader.read(directory: directory, repair: false)
            for entry in journal.entries {
                let sequence = try? withBytes(of: entry.payload) { (raw) throws(BinaryDecodingError) in
                    try ShardRecordCodec.decode(raw, maxShards: ShardLayout.maxCount).sequence
                }
                guard let sequence, sequence <= covered else {
                    throw .corrupt(file: journal.segments[entry.segment].path, offset: entry.offset)
                }
            }
            if !readOnly {
                for segment in journal.segments { try FileSystem.removeFile(segment.path) }
            }
        }
    }

    /// A decoded journal record and the index of its entry in the shard's journal.
    private struct DecodedRecord {
        let record: ShardRecord
        let entry: Int
    }

    /// Decodes the records of `journal` that come after `sequence`; they must continue it without gaps.
    private static func decode(_ journal: JournalContents, after sequence: UInt64, layout: ShardLayout)
        throws(JournalError) -> [DecodedRecord]
    {
        var decoded: [DecodedRecord] = []
        var expected = sequence + 1
        for (index, entry) in journal.entries.enumerated() {
            let file = journal.segments[entry.segment].path
            let record: ShardRecord
            do throws(BinaryDecodingError) {
                record = try withBytes(of: entry.payload) { (raw) throws(BinaryDecodingError) in
                    try ShardRecordCodec.decode(raw, maxShards: layout.count)
                }
            } catch {
                throw .undecodableRecord(file: file, offset: entry.offset, reason: error.reason)
            }
            if record.sequence < expected { continue }
            guard record.sequence == expected else {
                throw .undecodableRecord(
                    file: file, offset: entry.offset,
                    reason: "sequence \(record.sequence) where \(expected) was expected (records are missing)")
            }
            decoded.append(DecodedRecord(record: record, entry: index))
            expected += 1
        }
        return decoded
    }

    /// How many records of each shard to keep so that every kept multi-shard write is complete.
    private static func completeTransactionCuts(_ records: [[DecodedRecord]]) -> [Int] {
        var cuts = records.map(\.count)
        var positions = [[UInt64: Int]](repeating: [:], count: records.count)
        for (shard, shardRecords) in records.enumerated() {
            for (position, decoded) in shardRecords.enumerated() {
                if let tag = decoded.record.transaction { positions[shard][tag.id] = position }
            }
        }
        var changed = true
        while changed {
            changed = false
            for shard in records.indices {
                for position in 0..<cuts[shard] {
                    guard let tag = records[shard][position].record.transaction else { continue }
                    let complete = tag.participants.contains(shard) && tag.participants.allSatisfy { participant in
                        participant < records.count
                            && (positions[participant][tag.id].map { $0 < cuts[participant] } ?? false)
                    }
                    if !complete {
                        cuts[shard] = position
                        changed = true
                        break
                    }
                }
            }
        }
        return cuts
    }
}
