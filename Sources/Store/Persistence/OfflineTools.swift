import DataModel
import Dispatch

/// `canopy export` and `canopy import`: whole-namespace operations on a data directory while no server runs.
///
/// Both take the namespace's directory lock, so they fail with ``JournalError/locked(directory:)`` while a server
/// (or another tool) has the namespace open. The JSON is Firebase's export format (`.priority` and `.value` kept,
/// data-model.md §4.2), which is also what `import` expects.
public enum OfflineTools {
    /// Why an import failed.
    public enum ImportError: Error, Sendable, CustomStringConvertible {
        /// The input is not valid Firebase JSON.
        case invalidJSON(JSONError)
        /// A server value in the input could not be resolved.
        case serverValue(ValueError)
        /// Reading the input or writing the namespace failed.
        case persistence(JournalError)
        /// The namespace refused the write.
        case refused(StoreError)

        /// A one-line message.
        public var description: String {
            switch self {
            case .invalidJSON(let error): return "invalid JSON: \(error)"
            case .serverValue(let error): return "server value: \(error)"
            case .persistence(let error): return error.description
            case .refused(let error): return "refused: \(error)"
            }
        }
    }

    /// The node at `path` of the namespace in `directory`, as export-format JSON (`null` when empty or when the
    /// namespace does not exist). Replays the journal without changing any file; `compiler` compiles the rules
    /// revisions the log holds (replay re-takes their decisions).
    public static func exportJSON(directory: String, path: Path, repair: Bool = false,
                                  compiler: RulesCompiler? = nil) throws(JournalError) -> [UInt8]
    {
        guard FileSystem.isDirectory(directory) else { return Array("null".utf8) }
        var persistence = PersistenceConfiguration(directory: directory)
        persistence.readOnly = true
        persistence.repair = repair
        let store = try Store(configuration: StoreConfiguration(persistence: persistence, rulesCompiler: compiler))
        defer { try? store.close() }
        var writer = JSONWriter()
        writer.writeExport(store.sequencer.queue.sync { store.sequencer.state.root }.descendant(at: path))
        return writer.bytes
    }

    /// The log entries in the journal of the namespace in `directory` (those after its last snapshot), decoded
    /// without applying them: to inspect a log or replay it elsewhere (``LogState/apply(_:isReplay:)``).
    public static func journalEntries(directory: String) throws(JournalError) -> (snapshotSequence: UInt64,
                                                                                  entries: [LogEntry])
    {
        let files = NamespaceFiles(directory: directory)
        let lock = try DirectoryLock(path: files.lockPath, directory: directory)
        defer { lock.unlock() }
        let snapshot = try StateSnapshotFile.read(files.statePath)
        let journal = try JournalReader.read(directory: files.logDirectory, repair: false)
        var entries: [LogEntry] = []
        for entry in journal.entries {
            do throws(BinaryDecodingError) {
                let decoded = try withBytes(of: entry.payload) { (raw) throws(BinaryDecodingError) in
                    try LogEntryCodec.decode(raw)
                }
                if decoded.sequence > snapshot.sequence { entries.append(decoded) }
            } catch {
                throw .undecodableRecord(file: journal.segments[entry.segment].path, offset: entry.offset,
                                         reason: error.reason)
            }
        }
        return (snapshot.sequence, entries)
    }

    /// Replaces the node at `path` of the namespace in `directory` with the export-format JSON in the file at
    /// `file`, creating the namespace if needed. The import is one privileged write entry of the namespace's log
    /// (server values in the input take the entry's time), applied and folded straight into a fresh snapshot that
    /// covers the whole journal: a value of any size is never journaled, and a server starting afterwards loads it
    /// without replay.
    public static func importJSON(file: String, directory: String, path: Path, repair: Bool = false,
                                  compiler: RulesCompiler? = nil,
                                  clock: @Sendable () -> Double = StoreConfiguration.systemClock)
        throws(ImportError)
    {
        let value = try parse(file: file, depth: path.depth)
        let files = NamespaceFiles(directory: directory)
        let lock = try persistence { () throws(JournalError) in
            try FileSystem.makeDirectories(directory)
            return try DirectoryLock(path: files.lockPath, directory: directory)
        }
        defer { lock.unlock() }
        let loaded = try persistence { () throws(JournalError) in
            try LogLoader.load(files, compiler: compiler, repair: repair, readOnly: false)
        }
        var state = loaded.state
        let entry = LogEntry(
            sequence: state.sequence + 1, timestamp: max(state.timestamp, clock()),
            operation: .write(.set(.node(path), value, expectedHash: nil), caller: .privileged,
                              rulesVersion: state.rules.version))
        if case .rejected(let error) = state.apply(entry) {
            if case .serverValue(let problem) = error { throw .serverValue(problem) }
            throw .refused(error)
        }
        try persistence { () throws(JournalError) in
            try StateSnapshotFile.write(
                StateSnapshotFile.Contents(root: state.root, sequence: state.sequence, timestamp: state.timestamp,
                                           rules: state.rules),
                to: files.statePath)
            // The snapshot's sequence is above every journaled entry: they are all covered.
            for segment in loaded.segments { try FileSystem.removeFile(segment.path) }
            try FileSystem.synchronizeDirectory(files.directory)
        }
    }

    private static func persistence<T>(_ body: () throws(JournalError) -> T) throws(ImportError) -> T {
        do throws(JournalError) {
            return try body()
        } catch {
            throw .persistence(error)
        }
    }

    /// Reads and parses the input file; its bytes are released before the caller builds anything else.
    private static func parse(file: String, depth: Int) throws(ImportError) -> WriteValue {
        let bytes: [UInt8]
        do throws(JournalError) {
            bytes = try FileSystem.readFile(file)
        } catch {
            throw .persistence(error)
        }
        do throws(JSONError) {
            return try JSONReader.readData(bytes, depth: depth, maxBytes: Int.max)
        } catch {
            throw .invalidJSON(error)
        }
    }
}
