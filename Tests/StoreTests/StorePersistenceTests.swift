import DataModel
@testable import Store
import Glibc
import TestSupport
import Testing

@Suite("Store persistence")
struct StorePersistenceTests {
    static func configuration(_ directory: String, policy: FsyncPolicy = .always, repair: Bool = false)
        -> StoreConfiguration {
        var persistence = PersistenceConfiguration(directory: directory)
        persistence.fsyncPolicy = policy
        persistence.repair = repair
        persistence.snapshotIntervalSeconds = nil
        return StoreConfiguration(persistence: persistence, clock: Fixture.fixedClock)
    }

    /// A mix of sets, multi-path updates, priorities and server values, at the root and below.
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

    @Test("a journal replayed at start counts toward the next snapshot, so crash after crash still snapshots")
    func replayedJournalIsDueForSnapshot() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Self.configuration(directory.path)
        configuration.persistence?.snapshotJournalBytes = 2_000
        // Each run writes less than the threshold, then dies without a snapshot.
        for run in 0..<3 {
            let store = try Store(configuration: configuration)
            for index in 0..<10 {
                await store.applyOrFail(try Fixture.set("/runs/r\(run)/w\(index)", #""\#(String(repeating: "x", count: 60))""#))
            }
            store.abandonForTesting()
        }
        let reopened = try Store(configuration: configuration)
        defer { try? reopened.close() }
        // A run whose replayed and new records together crossed the threshold snapshots in the background, and may
        // finish that before it dies (timing): then fewer than all 30 (or none) are replayed, and the snapshot is
        // already there.
        #expect(reopened.loadReport.replayedRecords <= 30)
        // The replayed journal counts toward the threshold: a snapshot follows without another write.
        var snapshotted = false
        for _ in 0..<300 where !snapshotted {
            try await Task.sleep(nanoseconds: 10_000_000)
            snapshotted = FileSystem.exists(directory.path + "/state.canopy")
                && ((try? FileSystem.fileSize(directory.path + "/state.canopy")) ?? 0) > 100
        }
        #expect(snapshotted)
    }

    @Test("many small records make a snapshot due by their replay cost, far below the byte threshold")
    func replayCostMakesSnapshotDue() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = Self.configuration(directory.path)
        configuration.persistence?.snapshotJournalBytes = 1 << 30
        // 20 records at the default 4 µs each come to 80 µs of replay: past a 50 µs budget, 2,000 bytes short of
        // nothing by size.
        configuration.persistence?.snapshotReplaySeconds = 50e-6
        let store = try Store(configuration: configuration)
        defer { try? store.close() }
        for index in 0..<20 {
            await store.applyOrFail(try Fixture.set("/small/w\(index)", "\(index)"))
        }
        var snapshotted = false
        for _ in 0..<300 where !snapshotted {
            try await Task.sleep(nanoseconds: 10_000_000)
            snapshotted = ((try? FileSystem.fileSize(directory.path + "/state.canopy")) ?? 0) > 100
        }
        #expect(snapshotted)
    }

    @Test("the replay cost per record comes from this start's replay once it replayed enough records")
    func replayCostObserved() {
        #expect(ReplayCost.observed(records: 100, seconds: 1) == .measuredDefault)
        #expect(ReplayCost.observed(records: 100_000, seconds: 0.5) == ReplayCost(secondsPerRecord: 5e-6))
        #expect(ReplayCost(secondsPerRecord: 4e-6).seconds(toReplay: 250_000) == 1)
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
        let segments = try JournalSegment.list(in: files.logDirectory)
        #expect(segments.map(\.firstSequence) == [8], "only the segment started at the cut is kept")
        let reopened = try Store(configuration: Self.configuration(directory.path))
        defer { try? reopened.close() }
        var expected = try Self.expectedTree()
        expected.set(Node(.number(1)), at: try Fixture.path("/after"))
        #expect(await reopened.tree == expected)
        #expect(reopened.loadReport.replayedRecords == 1)
    }

    /// The journal segment holding the log's last entry.
    static func lastSegment(_ directory: String) throws -> JournalSegment? {
        let segment = try JournalSegment.list(in: NamespaceFiles(directory: directory).logDirectory).last
        guard let segment, try FileSystem.fileSize(segment.path) > 0 else { return nil }
        return segment
    }

    @Test("a torn final record is discarded and reported, and everything before it is kept")
    func tornTailOnStartUp() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path))
        await store.applyOrFail(try Fixture.set("/a", "1"))
        await store.applyOrFail(try Fixture.set("/b", "2"))
        await store.applyOrFail(try Fixture.set("/c", "3"))
        store.abandonForTesting()
        let segment = try #require(try Self.lastSegment(directory.path))
        let size = try FileSystem.fileSize(segment.path)
        try FileSystem.truncate(segment.path, to: size - 3)

        let reopened = try Store(configuration: Self.configuration(directory.path))
        let discard = try #require(reopened.loadReport.discards.first)
        #expect(discard.file == segment.path)
        #expect(discard.reason == .tornTail)
        #expect(try FileSystem.fileSize(segment.path) == discard.offset, "the torn bytes are cut off")
        #expect(await reopened.tree == (try Fixture.node(#"{"a":1,"b":2}"#)))
        // Appends continue cleanly after the cut.
        await reopened.applyOrFail(try Fixture.set("/d", "4"))
        reopened.abandonForTesting()
        let again = try Store(configuration: Self.configuration(directory.path))
        defer { try? again.close() }
        #expect(again.loadReport.discards == [])
        #expect(await again.tree == (try Fixture.node(#"{"a":1,"b":2,"d":4}"#)))
    }

    @Test("corruption before the end stops start-up naming the file and offset; repair truncates there")
    func corruptionOnStartUp() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try Store(configuration: Self.configuration(directory.path))
        for key in ["a", "b", "c", "d"] { await store.applyOrFail(try Fixture.set("/\(key)", #""\#(key)""#)) }
        store.abandonForTesting()
        let segment = try #require(try Self.lastSegment(directory.path))
        let journal = try JournalReader.read(directory: FileSystem.directoryName(of: segment.path), repair: false)
        let third = journal.entries[2]
        var bytes = try FileSystem.readFile(segment.path)
        bytes[third.offset + RecordFraming.headerSize] ^= 0xFF
        try FileSystem.writeAtomically(segment.path, temporaryPath: segment.path + ".tmp", bytes: bytes)

        #expect(throws: JournalError.corrupt(file: segment.path, offset: third.offset)) {
            try Store(configuration: Self.configuration(directory.path))
        }
        let repaired = try Store(configuration: Self.configuration(directory.path, repair: true))
        defer { try? repaired.close() }
        #expect(repaired.loadReport.discards == [
            LoadReport.Discard(file: segment.path, offset: third.offset, reason: .repairedCorruption),
        ])
        #expect(await repaired.tree == (try Fixture.node(#"{"a":"a","b":"b"}"#)))
    }

    @Test("a directory of an earlier, unreleased format is refused with the way out, and left as it is")
    func refusesEarlierFormat() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let files = NamespaceFiles(directory: directory.path)
        try FileSystem.makeDirectories(directory.path)
        let old = Array("earlier format".utf8)
        let file = try FileDescriptor(opening: files.earlierFormatSnapshotPath, flags: O_WRONLY | O_CREAT, mode: 0o644)
        try file.writeAll(old, path: files.earlierFormatSnapshotPath)
        do {
            _ = try Store(configuration: Self.configuration(directory.path))
            Issue.record("an earlier format was opened")
        } catch {
            let text = "\(error)"
            #expect(text.contains("canopy export") && text.contains("canopy import"), "\(text)")
        }
        #expect(!FileSystem.exists(files.statePath), "nothing was written over it")
    }
}
