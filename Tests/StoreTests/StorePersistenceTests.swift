import DataModel
@testable import Store
import TestSupport
import Testing

@Suite("Store persistence")
struct StorePersistenceTests {
    static func configuration(_ directory: String, layout: ShardLayout = ShardLayout(count: 3),
                              policy: FsyncPolicy = .always, repair: Bool = false) -> StoreConfiguration {
        var persistence = PersistenceConfiguration(directory: directory)
        persistence.fsyncPolicy = policy
        persistence.repair = repair
        persistence.snapshotIntervalSeconds = nil
        return StoreConfiguration(layout: layout, persistence: persistence, clock: Fixture.fixedClock)
    }

    /// A mix of single-shard, multi-shard and wide writes.
    static func sampleWrites() throws -> [StoreWrite] {
        [
            try Fixture.set("/users/alice", #"{"name":"Alice","age":30,".priority":1}"#),
            try Fixture.set("/users/bob/name", #""Bob""#),
            try Fixture.update("/", [("rooms/r1/title", #""Lobby""#), ("counters/visits", #"{".sv":{"increment":1}}"#)]),
            try Fixture.set("/config", #"{".value":"on",".priority":"p"}"#),
            try Fixture.update("/users", [("alice/age", "31"), ("carol", #"{"name":"Carol"}"#)]),
            .remove(try Fixture.path("/users/bob")),
            try Fixture.set("/rooms/r2", #"{"title":"Kitchen","when":{".sv":"timestamp"}}"#),
        ]
    }

    static func expectedTree() throws -> Node {
        var reference = ReferenceTree()
        for write in try sampleWrites() { reference.apply(write, timestamp: Fixture.fixedTimestamp) }
        return reference.root
    }

    static func populate(_ store: Store) async throws {
        for write in try sampleWrites() { await store.applyOrFail(write) }
    }

    @Test("a closed store reopens with the same tree from its snapshot", arguments: [
        FsyncPolicy.always, .interval(milliseconds: 10), .none,
    ])
    func reopenAfterClose(policy: FsyncPolicy) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path, policy: policy))
        try await Self.populate(store)
        try store.close()
        let reopened = try Store(configuration: Self.configuration(directory.path, policy: policy))
        defer { try? reopened.close() }
        #expect(reopened.loadReport.loadedSnapshot)
        #expect(reopened.loadReport.replayedRecords == 0)
        #expect(await reopened.tree == (try Self.expectedTree()))
    }

    @Test("a store that stopped without a snapshot replays its journals")
    func replayAfterCrash() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path))
        try await Self.populate(store)
        store.abandonForTesting()
        let reopened = try Store(configuration: Self.configuration(directory.path))
        defer { try? reopened.close() }
        #expect(reopened.loadReport.replayedRecords > 0)
        #expect(reopened.loadReport.discards == [])
        #expect(await reopened.tree == (try Self.expectedTree()))
    }

    @Test("a second store cannot open a namespace that is in use")
    func exclusiveLock() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path))
        #expect(throws: JournalError.locked(directory: directory.path)) {
            try Store(configuration: Self.configuration(directory.path))
        }
        try store.close()
    }

    @Test("a snapshot deletes the journal segments it covers and the state survives")
    func snapshotPrunesJournals() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path))
        try await Self.populate(store)
        let result: Result<Void, JournalError> = await withCheckedContinuation { continuation in
            store.takeSnapshot { continuation.resume(returning: $0) }
        }
        #expect((try? result.get()) != nil)
        await store.applyOrFail(try Fixture.set("/after", "1"))
        store.abandonForTesting()
        let files = NamespaceFiles(directory: directory.path)
        for shard in 0..<3 {
            let segments = try JournalSegment.list(in: files.journalDirectory(shard: shard))
            #expect(segments.count == 1, "shard \(shard) keeps only the segment started at the cut")
        }
        let reopened = try Store(configuration: Self.configuration(directory.path))
        defer { try? reopened.close() }
        var expected = try Self.expectedTree()
        expected.set(Node(.number(1)), at: try Fixture.path("/after"))
        #expect(await reopened.tree == expected)
        #expect(reopened.loadReport.replayedRecords == 1)
    }

    /// The journal segment holding the last record of some shard, and that shard.
    static func lastSegment(_ directory: String, shards: Int) throws -> (shard: Int, segment: JournalSegment)? {
        let files = NamespaceFiles(directory: directory)
        for shard in 0..<shards {
            if let segment = try JournalSegment.list(in: files.journalDirectory(shard: shard)).last,
                try FileSystem.fileSize(segment.path) > 0
            {
                return (shard, segment)
            }
        }
        return nil
    }

    @Test("a torn final record is discarded and reported, and everything before it is kept")
    func tornTailOnStartUp() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let layout = ShardLayout(count: 1)
        let store = try Store(configuration: Self.configuration(directory.path, layout: layout))
        await store.applyOrFail(try Fixture.set("/a", "1"))
        await store.applyOrFail(try Fixture.set("/b", "2"))
        await store.applyOrFail(try Fixture.set("/c", "3"))
        store.abandonForTesting()
        let (_, segment) = try #require(try Self.lastSegment(directory.path, shards: 1))
        let size = try FileSystem.fileSize(segment.path)
        try FileSystem.truncate(segment.path, to: size - 3)

        let reopened = try Store(configuration: Self.configuration(directory.path, layout: layout))
        let discard = try #require(reopened.loadReport.discards.first)
        #expect(discard.file == segment.path)
        #expect(discard.reason == .tornTail)
        #expect(try FileSystem.fileSize(segment.path) == discard.offset, "the torn bytes are cut off")
        #expect(await reopened.tree == (try Fixture.node(#"{"a":1,"b":2}"#)))
        // Appends continue cleanly after the cut.
        await reopened.applyOrFail(try Fixture.set("/d", "4"))
        reopened.abandonForTesting()
        let again = try Store(configuration: Self.configuration(directory.path, layout: layout))
        defer { try? again.close() }
        #expect(again.loadReport.discards == [])
        #expect(await again.tree == (try Fixture.node(#"{"a":1,"b":2,"d":4}"#)))
    }

    @Test("corruption before the end stops start-up naming the file and offset; repair truncates there")
    func corruptionOnStartUp() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let layout = ShardLayout(count: 1)
        let store = try Store(configuration: Self.configuration(directory.path, layout: layout))
        for key in ["a", "b", "c", "d"] { await store.applyOrFail(try Fixture.set("/\(key)", #""\#(key)""#)) }
        store.abandonForTesting()
        let (_, segment) = try #require(try Self.lastSegment(directory.path, shards: 1))
        let journal = try JournalReader.read(directory: FileSystem.directoryName(of: segment.path), repair: false)
        let third = journal.entries[2]
        var bytes = try FileSystem.readFile(segment.path)
        bytes[third.offset + RecordFraming.headerSize] ^= 0xFF
        try FileSystem.writeAtomically(segment.path, temporaryPath: segment.path + ".tmp", bytes: bytes)

        #expect(throws: JournalError.corrupt(file: segment.path, offset: third.offset)) {
            try Store(configuration: Self.configuration(directory.path, layout: layout))
        }
        let repaired = try Store(configuration: Self.configuration(directory.path, layout: layout, repair: true))
        defer { try? repaired.close() }
        #expect(repaired.loadReport.discards == [
            LoadReport.Discard(file: segment.path, offset: third.offset, reason: .repairedCorruption),
        ])
        #expect(await repaired.tree == (try Fixture.node(#"{"a":"a","b":"b"}"#)))
    }

    @Test("a multi-shard write missing from one participant's journal is discarded everywhere")
    func incompleteTransaction() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let layout = ShardLayout(count: 4)
        let keys = try StoreConcurrencyTests.keysInDistinctShards(2)
        let store = try Store(configuration: Self.configuration(directory.path, layout: layout))
        await store.applyOrFail(try Fixture.set("/\(keys[0])/before", "1"))
        await store.applyOrFail(try Fixture.update("/", [("\(keys[0])/both", "2"), ("\(keys[1])/both", "2")]))
        store.abandonForTesting()
        // Remove the multi-shard record from the second participant, as if the crash came before it was written.
        let files = NamespaceFiles(directory: directory.path)
        let second = try #require(layout.shard(for: try Fixture.path(keys[1])))
        let secondDirectory = files.journalDirectory(shard: second)
        let journal = try JournalReader.read(directory: secondDirectory, repair: false)
        let last = try #require(journal.entries.last)
        try FileSystem.truncate(journal.segments[last.segment].path, to: last.offset)

        let reopened = try Store(configuration: Self.configuration(directory.path, layout: layout))
        defer { try? reopened.close() }
        #expect(reopened.loadReport.discards.contains { discard in
            if case .incompleteTransaction = discard.reason { return true }
            return false
        })
        #expect(await reopened.tree == (try Fixture.node(#"{"\#(keys[0])":{"before":1}}"#)))
    }

    @Test("reopening with another shard layout re-partitions the data", arguments: [
        ShardLayout(count: 5, depth: 1), ShardLayout(count: 2, depth: 2), ShardLayout(count: 1, depth: 1),
    ])
    func relayout(layout: ShardLayout) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path))
        try await Self.populate(store)
        store.abandonForTesting()
        let reopened = try Store(configuration: Self.configuration(directory.path, layout: layout))
        #expect(reopened.layout == layout)
        #expect(reopened.loadReport.previousLayout == ShardLayout(count: 3))
        #expect(await reopened.tree == (try Self.expectedTree()))
        await reopened.applyOrFail(try Fixture.set("/users/dave", #""D""#))
        reopened.abandonForTesting()
        let again = try Store(configuration: Self.configuration(directory.path, layout: layout))
        defer { try? again.close() }
        var expected = try Self.expectedTree()
        expected.set(Node(.string("D")), at: try Fixture.path("/users/dave"))
        #expect(await again.tree == expected)
    }
}
