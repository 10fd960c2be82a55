import Dispatch
@testable import Store
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Journal")
struct JournalTests {
    static func payload(_ sequence: UInt64) -> [UInt8] {
        Array("record \(sequence) ".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: 20)
    }

    static func openWriter(_ directory: String, policy: FsyncPolicy = .always, maxSegmentBytes: Int = 1 << 20)
        throws -> JournalWriter
    {
        try JournalWriter(directory: directory, existing: JournalSegment.list(in: directory), policy: policy,
                          maxSegmentBytes: maxSegmentBytes, label: "test.journal")
    }

    /// Appends `range` from many threads at once (in sequence order under a lock) and waits for every ack.
    static func append(_ range: ClosedRange<UInt64>, to journal: JournalWriter) async -> [Result<Void, JournalError>] {
        let order = Locked<UInt64>(range.lowerBound)
        let results = Locked<[Result<Void, JournalError>]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Locked<Int>(range.count)
            DispatchQueue.concurrentPerform(iterations: range.count) { _ in
                order.withLock { next in
                    let sequence = next
                    next += 1
                    journal.append(sequence: sequence, payload: payload(sequence), ack: { result in
                        results.withLock { $0.append(result) }
                        if remaining.withLock({ $0 -= 1; return $0 }) == 0 {
                            continuation.resume()
                        }
                    })
                }
            }
        }
        return results.withLock { $0 }
    }

    static func payloads(of journal: JournalContents) -> [[UInt8]] {
        journal.entries.map { Array($0.payload) }
    }

    @Test("records are acknowledged and read back in order", arguments: [
        FsyncPolicy.always, .interval(milliseconds: 5), .none,
    ])
    func roundTrip(policy: FsyncPolicy) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.openWriter(directory.path, policy: policy)
        let results = await Self.append(1...500, to: journal)
        try journal.close()
        #expect(results.count == 500)
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        let read = try JournalReader.read(directory: directory.path, repair: false)
        #expect(Self.payloads(of: read) == (1...500).map(Self.payload))
        #expect(read.tornTail == nil)
    }

    @Test("concurrent appends share fdatasync calls (group commit)")
    func groupCommit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.openWriter(directory.path)
        _ = await Self.append(1...2000, to: journal)
        let commits = journal.groupCommits
        try journal.close()
        #expect(commits >= 1)
        #expect(commits < 2000)
    }

    @Test("segments rotate by size, and covered segments are deleted")
    func rotationAndRemoval() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.openWriter(directory.path, maxSegmentBytes: 1000)
        for sequence in UInt64(1)...200 { _ = await Self.append(sequence...sequence, to: journal) }
        let segments = try JournalSegment.list(in: directory.path)
        #expect(segments.count > 3)
        let covered = segments[2].firstSequence - 1
        journal.removeSegments(coveredThrough: covered)
        try journal.close()
        let remaining = try JournalSegment.list(in: directory.path)
        #expect(remaining.first == segments[2])
        let read = try JournalReader.read(directory: directory.path, repair: false)
        #expect(Self.payloads(of: read) == (covered + 1...200).map(Self.payload))
    }

    @Test("a rotation creates the next segment at once, even with no record after it")
    func eagerRotation() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.openWriter(directory.path)
        _ = await Self.append(1...10, to: journal)
        journal.rotate(nextSequence: 11)
        journal.removeSegments(coveredThrough: 10)
        try journal.close()
        #expect(try JournalSegment.list(in: directory.path).map(\.firstSequence) == [11])
    }

    @Test("a file cut inside its last record reads as a torn tail after the good records")
    func tornTail() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.openWriter(directory.path)
        _ = await Self.append(1...20, to: journal)
        try journal.close()
        let segment = try #require(try JournalSegment.list(in: directory.path).last)
        let size = try FileSystem.fileSize(segment.path)
        try FileSystem.truncate(segment.path, to: size - 5)
        let read = try JournalReader.read(directory: directory.path, repair: false)
        #expect(Self.payloads(of: read) == (1...19).map(Self.payload))
        let lastRecordSize = RecordFraming.headerSize + Self.payload(20).count
        #expect(read.tornTail == JournalContents.Position(segment: 0, offset: size - lastRecordSize))
    }

    @Test("damage before the last record stops reading with the file and offset, unless repairing")
    func corruptionInTheMiddle() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Self.openWriter(directory.path)
        _ = await Self.append(1...20, to: journal)
        try journal.close()
        let segment = try #require(try JournalSegment.list(in: directory.path).last)
        let recordSize = RecordFraming.headerSize + Self.payload(1).count
        var bytes = try FileSystem.readFile(segment.path)
        bytes[5 * recordSize + RecordFraming.headerSize + 3] ^= 0x40
        try FileSystem.writeAtomically(segment.path, temporaryPath: segment.path + ".tmp", bytes: bytes)
        #expect(throws: JournalError.corrupt(file: segment.path, offset: 5 * recordSize)) {
            try JournalReader.read(directory: directory.path, repair: false)
        }
        let repaired = try JournalReader.read(directory: directory.path, repair: true)
        #expect(Self.payloads(of: repaired) == (1...5).map(Self.payload))
        #expect(repaired.repairedCorruption == JournalContents.Position(segment: 0, offset: 5 * recordSize))
    }
}
