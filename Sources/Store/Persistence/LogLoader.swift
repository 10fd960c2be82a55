import DataModel
import Dispatch

/// A namespace as start-up recovered it: its log state and the journal segments to append to.
struct LoadedLog: Sendable {
    var state: LogState
    var segments: [JournalSegment]
    var report: LoadReport
}

/// Start-up: load the state snapshot and replay the journal's log entries after it.
///
/// 1. Read `state.canopy`. Without one, the namespace is created with an empty snapshot, unless the directory
///    holds data of an earlier, unreleased format (`snapshot.canopy`), which is refused with the way out (export it
///    with the version that wrote it, then import the export).
/// 2. Read the journal. A torn final record is dropped; other damage stops start-up with the file and offset
///    (``JournalError/corrupt(file:offset:)``) unless `repair` is set.
/// 3. Skip entries the snapshot covers; the rest must continue its sequence without gaps, and each write must name
///    the rules version the log has in force at its place.
/// 4. Apply them in order (``LogState/apply(_:isReplay:)``), re-taking every decision, and truncate the journal
///    where it was cut, so appends continue after the last good record.
enum LogLoader {
    static func load(_ files: NamespaceFiles, compiler: RulesCompiler?, repair: Bool, readOnly: Bool)
        throws(JournalError) -> LoadedLog
    {
        let started = DispatchTime.now()
        var report = LoadReport()
        if !readOnly {
            try FileSystem.makeDirectories(files.directory)
            try FileSystem.removeFile(files.temporaryStatePath)
        }
        let contents: StateSnapshotFile.Contents
        if FileSystem.exists(files.statePath) {
            contents = try StateSnapshotFile.read(files.statePath)
            report.loadedSnapshot = true
        } else if FileSystem.exists(files.earlierFormatSnapshotPath) {
            throw .corruptSnapshot(file: files.earlierFormatSnapshotPath, reason: "data of an earlier format, which "
                + "this version does not read: export it with the version that wrote it (canopy export) and import "
                + "the export (canopy import)")
        } else {
            guard try JournalSegment.list(in: files.logDirectory).isEmpty else {
                throw .corruptSnapshot(file: files.statePath, reason: "missing, but journal segments exist")
            }
            contents = StateSnapshotFile.Contents(root: .empty, sequence: 0, timestamp: 0, rules: .initial)
            if !readOnly { try StateSnapshotFile.write(contents, to: files.statePath) }
        }
        var state: LogState
        do throws(LogStateError) {
            state = try LogState(root: contents.root, sequence: contents.sequence, timestamp: contents.timestamp,
                                 rules: contents.rules, compiler: compiler)
        } catch {
            throw .corruptSnapshot(file: files.statePath, reason: error.description)
        }

        let replayStarted = DispatchTime.now()
        let journal = try JournalReader.read(directory: files.logDirectory, repair: repair)
        for entry in journal.entries {
            let file = journal.segments[entry.segment].path
            let decoded: LogEntry
            do throws(BinaryDecodingError) {
                decoded = try withBytes(of: entry.payload) { (raw) throws(BinaryDecodingError) in
                    try LogEntryCodec.decode(raw)
                }
            } catch {
                throw .undecodableRecord(file: file, offset: entry.offset, reason: error.reason)
            }
            if decoded.sequence <= state.sequence { continue }
            guard decoded.sequence == state.sequence + 1 else {
                throw .undecodableRecord(
                    file: file, offset: entry.offset,
                    reason: "sequence \(decoded.sequence) where \(state.sequence + 1) was expected (entries are missing)")
            }
            if case .write(_, _, let version) = decoded.operation, version != state.rules.version {
                throw .undecodableRecord(
                    file: file, offset: entry.offset,
                    reason: "write under rules version \(version) where \(state.rules.version) is in force")
            }
            if case .rulesInstalled(compiled: false) = state.apply(decoded, isReplay: true) {
                guard compiler != nil else {
                    throw .undecodableRecord(file: file, offset: entry.offset,
                                             reason: "rules entry, but no rules compiler was given")
                }
            }
            report.replayedRecords += 1
        }
        report.replaySeconds = Double(DispatchTime.now().uptimeNanoseconds - replayStarted.uptimeNanoseconds) / 1e9

        var remaining = journal.segments
        var cut: (JournalContents.Position, LoadReport.Discard.Reason)?
        if let torn = journal.tornTail {
            cut = (torn, .tornTail)
        } else if let corruption = journal.repairedCorruption {
            cut = (corruption, .repairedCorruption)
        }
        if let (position, reason) = cut {
            report.discards.append(LoadReport.Discard(
                file: journal.segments[position.segment].path, offset: position.offset, reason: reason))
            if !readOnly {
                remaining = try JournalReader.truncate(journal, at: position, directory: files.logDirectory)
            }
        }
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
        return LoadedLog(state: state, segments: remaining, report: report)
    }
}
