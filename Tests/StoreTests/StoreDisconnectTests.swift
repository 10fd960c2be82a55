import DataModel
import Store
import Testing

/// A single node's onDisconnect writes go through the same API as a cluster's (`ClusterDisconnectTests`).
@Suite("onDisconnect writes on a single node")
struct StoreDisconnectTests {
    @Test("the last armed write runs once when its connection ends; a disarmed one never runs")
    func armFireDisarm() async throws {
        let store = try Fixture.memoryStore()
        let first = try Fixture.update("/", [("presence/alice", #""away""#)])
        let second = try Fixture.update("/", [("presence/alice", #""offline""#)])
        #expect(await arm(store, "s1", first))
        #expect(await arm(store, "s1", second))
        #expect(await arm(store, "s2", first))
        #expect(await arm(store, "s2", nil))
        #expect(await fire(store, "s2") == nil)
        let fired = await fire(store, "s1")
        #expect((try? fired?.get()) != nil)
        #expect(await fire(store, "s1") == nil)
        #expect(await store.value(at: try Fixture.path("/presence/alice")) == (try Fixture.node(#""offline""#)))
    }

    @Test("a fired write is refused like any other write once the store is closed")
    func refusedWhenClosed() async throws {
        let store = try Fixture.memoryStore()
        #expect(await arm(store, "s1", try Fixture.set("/gone", "true")))
        try store.close()
        guard case .failure(.unavailable)? = await fire(store, "s1") else {
            Issue.record("a closed store ran an onDisconnect write")
            return
        }
    }

    private func arm(_ store: Store, _ session: String, _ write: StoreWrite?) async -> Bool {
        await withCheckedContinuation { continuation in
            store.armDisconnect(session: session, write: write) { continuation.resume(returning: $0) }
        }
    }

    private func fire(_ store: Store, _ session: String) async -> Result<WriteOutcome, StoreError>? {
        await withCheckedContinuation { continuation in
            store.fireDisconnect(session: session) { continuation.resume(returning: $0) }
        }
    }
}
