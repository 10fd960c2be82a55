import DataModel
@testable import Store
import Synchronization
import Testing

@Suite("The whole tree and write authorization")
struct WholeTreeTests {
    private func store(_ layout: ShardLayout) throws -> Store {
        var configuration = StoreConfiguration(layout: layout, clock: Fixture.fixedClock)
        configuration.tracksWholeTree = true
        return try Store(configuration: configuration)
    }

    private func authorized(_ store: Store, _ write: StoreWrite, _ authorizer: @escaping WriteAuthorizer) async
        -> Result<WriteOutcome, StoreError>
    {
        await withCheckedContinuation { continuation in
            store.write(write, authorizer: authorizer) { continuation.resume(returning: $0) }
        }
    }

    @Test("the whole tree follows single- and multi-shard writes", arguments: Fixture.layouts)
    func follows(layout: ShardLayout) async throws {
        let store = try store(layout)
        await store.applyOrFail(try Fixture.set("/a/x", "1"))
        await store.applyOrFail(try Fixture.set("/b/y", #"{"z":2}"#))
        await store.applyOrFail(try Fixture.update("/", [("a/x", "3"), ("c", "4")]))
        let expected = try Fixture.node(#"{"a":{"x":3},"b":{"y":{"z":2}},"c":4}"#)
        #expect(store.wholeTreeSnapshot == expected)
        #expect(await store.tree == expected)
    }

    @Test("a refused write changes nothing; the authorizer sees the old and the new whole tree",
          arguments: Fixture.layouts)
    func refused(layout: ShardLayout) async throws {
        let store = try store(layout)
        await store.applyOrFail(try Fixture.set("/banned/mallory", "true"))
        // A rule on /posts reading /banned: the data lives on another shard in most layouts.
        let rule: WriteAuthorizer = { authorization in
            authorization.oldRoot.descendant(at: Path(keys: [Key(trusted: "banned"), Key(trusted: "mallory")])).isEmpty
                && authorization.timestamp == Fixture.fixedTimestamp
        }
        let post = try Fixture.set("/posts/p1", #"{"text":"hi","at":{".sv":"timestamp"}}"#)
        #expect(isDenied(await authorized(store, post, rule)))
        let wide = try Fixture.update("/", [("posts/p2", "1"), ("other", "2")])
        #expect(isDenied(await authorized(store, wide, rule)))
        #expect(await store.value(at: try Fixture.path("/posts")) == .empty)
        #expect(store.wholeTreeSnapshot == (try Fixture.node(#"{"banned":{"mallory":true}}"#)))
        await store.applyOrFail(try Fixture.set("/banned/mallory", "null"))
        let seen = SeenRoots()
        let allowed = await authorized(store, post) { authorization in
            seen.record(authorization.newRoot)
            return rule(authorization)
        }
        #expect((try? allowed.get()) != nil)
        let stored = try Fixture.node(#"{"posts":{"p1":{"at":1700000000000,"text":"hi"}}}"#)
        #expect(seen.roots == [stored])
        #expect(store.wholeTreeSnapshot == stored)
    }
}

/// Collects what an authorizer saw (it runs on a store queue).
private final class SeenRoots: Sendable {
    private let stored = Mutex<[Node]>([])
    func record(_ node: Node) { stored.withLock { $0.append(node) } }
    var roots: [Node] { stored.withLock { $0 } }
}

private func isDenied(_ result: Result<WriteOutcome, StoreError>) -> Bool {
    if case .failure(.denied) = result { return true }
    return false
}
