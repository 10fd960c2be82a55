import DataModel

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

        /// A one-line message.
        public var description: String {
            switch self {
            case .invalidJSON(let error): return "invalid JSON: \(error)"
            case .serverValue(let error): return "server value: \(error)"
            case .persistence(let error): return error.description
            }
        }
    }

    /// The node at `path` of the namespace in `directory`, as export-format JSON (`null` when empty or when the
    /// namespace does not exist). Replays the journal without changing any file.
    public static func exportJSON(directory: String, path: Path, repair: Bool = false) throws(JournalError)
        -> [UInt8]
    {
        let files = NamespaceFiles(directory: directory)
        guard FileSystem.isDirectory(directory) else { return Array("null".utf8) }
        let lock = try DirectoryLock(path: files.lockPath, directory: directory)
        defer { lock.unlock() }
        let loaded = try NamespaceLoader.load(files, configuredLayout: ShardLayout(count: 1), repair: repair,
                                              readOnly: true)
        let node = TreeView(layout: loaded.layout, states: loaded.states).value(at: path)
        var writer = JSONWriter()
        writer.writeExport(node)
        return writer.bytes
    }

    /// Replaces the node at `path` of the namespace in `directory` with the export-format JSON in the file at
    /// `file`, creating the namespace if needed. The result is written as a fresh snapshot (the journals are
    /// folded into it and deleted), so a server starting afterwards loads it without replay.
    ///
    /// - Parameters:
    ///   - layout: the shard layout to write; `nil` keeps the namespace's current one (or the default for a new
    ///     namespace). A server configured differently re-partitions at start-up.
    ///   - clock: server time for `{".sv":"timestamp"}` in the input, milliseconds since the epoch.
    public static func importJSON(file: String, directory: String, path: Path, layout: ShardLayout? = nil,
                                  repair: Bool = false,
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
            let existingLayout = FileSystem.exists(files.snapshotPath)
                ? try SnapshotFile.read(files.snapshotPath).layout : nil
            let configured = existingLayout ?? layout ?? ShardLayout(count: StoreConfiguration.defaultShardCount)
            return try NamespaceLoader.load(files, configuredLayout: configured, repair: repair, readOnly: false)
        }
        var tree = TreeView(layout: loaded.layout, states: loaded.states).wholeTree
        let current = tree
        do throws(ValueError) {
            tree.set(try value.resolved(timestamp: clock()) { current.descendant(at: path.appending($0)) }, at: path)
        } catch {
            throw .serverValue(error)
        }
        let target = layout ?? loaded.layout
        let sequence = (loaded.states.map(\.sequence).max() ?? 0) + 1
        let states = TreeView.partition(tree, layout: target, sequence: sequence)
        try persistence { () throws(JournalError) in
            try SnapshotFile.write(
                SnapshotFile.Contents(layout: target, states: states, nextTransactionId: loaded.nextTransactionId),
                to: files.snapshotPath)
            // The snapshot covers every journal record (its sequences are above all of them); delete them all.
            for shard in try files.journalShards() {
                for segment in try JournalSegment.list(in: files.journalDirectory(shard: shard)) {
                    try FileSystem.removeFile(segment.path)
                }
            }
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
