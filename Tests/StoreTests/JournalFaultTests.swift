#if canImport(Glibc)
import Glibc
#endif
import DataModel
@testable import Store
import TestSupport
import Testing

/// The journal under machine faults (issue 17): a full disk is waited out without acknowledging anything that is
/// not durable, and a failed `fdatasync` stops the namespace from acknowledging for good.
@Suite("Journal faults")
struct JournalFaultTests {
    /// A store in `directory` whose journal fails with the `errno`s the two locks hold (0: no fault), and the events
    /// it reported.
    static func store(_ directory: String, writeFault: Locked<Int32>, syncFault: Locked<Int32>,
                      events: Locked<[JournalEvent]>) throws -> Store {
        var configuration = StorePersistenceTests.configuration(directory)
        configuration.persistence?.faults = JournalFaults(
            write: { let errno = writeFault.withLock { $0 }; return errno == 0 ? nil : errno },
            synchronize: { let errno = syncFault.withLock { $0 }; return errno == 0 ? nil : errno })
        configuration.journalEvents = { event in events.withLock { $0.append(event) } }
        return try Store(configuration: configuration)
    }

    /// Waits (bounded: 20 s, for a loaded machine) until `condition` holds; the journal reports from its own queue.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<2_000 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
        return condition()
    }

    @Test("a full disk refuses new writes, holds applied ones unacknowledged, and resumes when space is back")
    func fullDisk() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (writeFault, syncFault, events) = (Locked<Int32>(0), Locked<Int32>(0), Locked<[JournalEvent]>([]))
        let store = try Self.store(directory.path, writeFault: writeFault, syncFault: syncFault, events: events)
        await store.applyOrFail(try Fixture.set("/a", "1"))
        writeFault.withLock { $0 = ENOSPC }
        let acknowledged = Locked(false)
        let held = Task { () -> Result<WriteOutcome, StoreError> in
            let result = await store.apply(try Fixture.set("/b", "2"))
            acknowledged.withLock { $0 = true }
            return result
        }
        #expect(await Self.eventually { events.withLock { !$0.isEmpty } })
        guard case .outOfSpace = events.withLock({ $0.first }) else {
            Issue.record("events: \(events.withLock { $0 })")
            return
        }
        let refused = await store.apply(try Fixture.set("/c", "3"))
        guard case .failure(.diskFull) = refused else {
            Issue.record("a write on a full disk gave \(refused)")
            return
        }
        #expect(!acknowledged.withLock { $0 })  // not durable, not acknowledged
        #expect(await store.value(at: try Fixture.path("/a")) == (try Fixture.node("1")))  // reads go on
        writeFault.withLock { $0 = 0 }
        #expect((try? await held.value.get()) != nil)
        // Reported from the journal's queue, which may run after the held write's acknowledgement.
        #expect(await Self.eventually { events.withLock { $0.last } == .spaceRecovered })
        await store.applyOrFail(try Fixture.set("/d", "4"))
        try store.close()
        let reopened = try Store(configuration: StorePersistenceTests.configuration(directory.path))
        defer { try? reopened.close() }
        #expect(await reopened.tree == (try Fixture.node(#"{"a":1,"b":2,"d":4}"#)))
    }

    @Test("a failed fdatasync stops the namespace from acknowledging, and says so")
    func failedSync() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (writeFault, syncFault, events) = (Locked<Int32>(0), Locked<Int32>(0), Locked<[JournalEvent]>([]))
        let store = try Self.store(directory.path, writeFault: writeFault, syncFault: syncFault, events: events)
        await store.applyOrFail(try Fixture.set("/a", "1"))
        syncFault.withLock { $0 = EIO }
        guard case .failure(.persistence) = await store.apply(try Fixture.set("/b", "2")) else {
            Issue.record("the write whose fdatasync failed was acknowledged")
            return
        }
        syncFault.withLock { $0 = 0 }  // a retry would now "succeed": it must not be tried
        #expect(await store.apply(try Fixture.set("/c", "3")).failure == .unavailable)
        guard case .failed(.systemCall("fdatasync", _, EIO)) = events.withLock({ $0.first }) else {
            Issue.record("events: \(events.withLock { $0 })")
            return
        }
        #expect(events.withLock { $0.count } == 1)
        #expect(await store.value(at: try Fixture.path("/a")) == (try Fixture.node("1")))
    }
}
