import DataModel
import Dispatch
@testable import Store
import Synchronization
import Testing

/// Rules in the log: revisions are entries, writes by users are judged by the revision in force at their place,
/// privileged writes are not, and a policy sees the whole tree before and after the write at the entry's time.
@Suite("Rules in the namespace log")
struct LogPolicyTests {
    /// A policy that refuses writes while `/banned/<uid>` exists and records what it saw.
    struct BanPolicy: AuthorizationPolicy {
        let seen: SeenAuthorizations
        func mayRead(_ question: ReadQuestion) -> Bool { true }
        func mayWrite(_ authorization: WriteQuestion) -> Bool {
            seen.record(authorization)
            guard case .string(let uid)? = authorization.auth?["uid"] else { return false }
            return authorization.oldRoot.descendant(at: Path(keys: [Key(trusted: "banned"), Key(trusted: uid)])).isEmpty
        }
    }

    static func store(seen: SeenAuthorizations) throws -> Store {
        try Store(configuration: StoreConfiguration(clock: Fixture.fixedClock, rulesCompiler: { source in
            source == Array("ban".utf8) ? BanPolicy(seen: seen) : nil
        }))
    }

    static func write(_ store: Store, _ write: StoreWrite, by caller: WriteCaller) async
        -> Result<WriteOutcome, StoreError>
    {
        await withCheckedContinuation { continuation in
            store.write(write, by: caller) { continuation.resume(returning: $0) }
        }
    }

    static func install(_ store: Store, _ source: String?) async -> Result<RulesRevision, StoreError> {
        await withCheckedContinuation { continuation in
            store.installRules(source: source.map { Array($0.utf8) }) { continuation.resume(returning: $0) }
        }
    }

    static let mallory = WriteCaller.user(auth: .object([("uid", .string("mallory"))]))

    @Test("a user's write is judged by the revision in force; privileged writes bypass it; a denial changes nothing")
    func judged() async throws {
        let seen = SeenAuthorizations()
        let store = try Self.store(seen: seen)
        let post = try Fixture.set("/posts/p1", #"{"text":"hi","at":{".sv":"timestamp"}}"#)
        await store.applyOrFail(try Fixture.set("/banned/mallory", "true"))
        // No rules yet: everything is allowed.
        #expect((try? await Self.write(store, try Fixture.set("/open", "1"), by: Self.mallory).get()) != nil)
        #expect(try await Self.install(store, "ban").get() == RulesRevision(version: 1, source: Array("ban".utf8)))
        #expect(await Self.write(store, post, by: Self.mallory).failure == .denied)
        #expect(await store.value(at: try Fixture.path("/posts")) == .empty)
        #expect(await Self.write(store, post, by: .privileged).failure == nil)
        await store.applyOrFail(.remove(try Fixture.path("/banned/mallory")))
        let second = try Fixture.set("/posts/p2", #"{"at":{".sv":"timestamp"}}"#)
        #expect(await Self.write(store, second, by: Self.mallory).failure == nil)
        let last = try #require(seen.all.last)
        #expect(last.timestamp == Fixture.fixedTimestamp)
        #expect(last.oldRoot.descendant(at: try Fixture.path("/posts/p2")) == .empty)
        #expect(last.newRoot.descendant(at: try Fixture.path("/posts/p2")) == (try Fixture.node(#"{"at":1700000000000}"#)))
        #expect(last.caller != nil)
        // The same source again is no new revision; no rules is one.
        #expect(try await Self.install(store, "ban").get().version == 1)
        #expect(try await Self.install(store, nil).get() == RulesRevision(version: 2, source: nil))
        await store.applyOrFail(try Fixture.set("/banned/mallory", "true"))
        #expect(await Self.write(store, try Fixture.set("/posts/p3", "1"), by: Self.mallory).failure == nil)
    }

    @Test("a rules change submitted and not yet in force keeps readers off the published state")
    func rulesChangeHidesThePublishedState() async throws {
        let store = try Self.store(seen: SeenAuthorizations())
        await withCheckedContinuation { continuation in
            store.inOrder(publishing: true) { _ in continuation.resume() }
        }
        #expect(store.current != nil)
        // Hold the sequencer, so that the change waits in its inbox as it may after its caller was answered.
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        store.inOrder { _ in
            holding.signal()
            held.wait()
        }
        holding.wait()
        let installed = Mutex<Result<RulesRevision, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        store.installRules(source: Array("ban".utf8)) { result in
            installed.withLock { $0 = result }
            done.signal()
        }
        #expect(store.current == nil, "a reader would be judged by the rules the change replaced")
        held.signal()
        done.wait()
        #expect(installed.withLock { $0 }?.map(\.version) == .success(1))
        await withCheckedContinuation { continuation in
            store.inOrder(publishing: true) { _ in continuation.resume() }
        }
        #expect(store.current?.rules.version == 1)
    }

    @Test("a revision that does not compile fails closed for users, not for privileged writes")
    func failsClosed() async throws {
        let store = try Self.store(seen: SeenAuthorizations())
        #expect(try await Self.install(store, "not rules").get().version == 1)
        #expect(await Self.write(store, try Fixture.set("/a", "1"), by: Self.mallory).failure == .denied)
        #expect(await Self.write(store, try Fixture.set("/a", "1"), by: .privileged).failure == nil)
        // A store given no compiler at all cannot judge: rules in its log deny every user's write.
        let uncompiled = try Store(configuration: StoreConfiguration(clock: Fixture.fixedClock))
        #expect(try await Self.install(uncompiled, "rules").get().version == 1)
        #expect(await Self.write(uncompiled, try Fixture.set("/a", "1"), by: Self.mallory).failure == .denied)
        #expect(await uncompiled.value(at: try Fixture.path("/a")) == .empty)
    }

    @Test("a push is named from its entry: time-ordered, unique, judged as the set of the new child")
    func pushIDs() async throws {
        let seen = SeenAuthorizations()
        let store = try Self.store(seen: seen)
        _ = await Self.install(store, "ban")
        let parent = try Fixture.path("/messages")
        var keys: [String] = []
        for text in ["a", "b", "c"] {
            let outcome = try await Self.write(store, .push(parent, try Fixture.value(#""\#(text)""#)), by: Self.mallory).get()
            keys.append(try #require(outcome.changes.first?.path.lastKey?.string))
        }
        #expect(keys == keys.sorted() && Set(keys).count == 3)
        #expect(keys.allSatisfy { PushIDGenerator.timestamp(of: $0) == Int64(Fixture.fixedTimestamp) })
        guard case .set(.node(let judged), _, _)? = seen.all.last?.write else {
            Issue.record("the policy saw \(String(describing: seen.all.last?.write))")
            return
        }
        #expect(judged.lastKey?.string == keys.last)
        let children = await store.value(at: parent).children.map(\.key.string)
        #expect(children == keys)
    }
}

/// What a policy saw (it runs on the sequencer).
final class SeenAuthorizations: Sendable {
    private let stored = Mutex<[WriteQuestion]>([])
    func record(_ authorization: WriteQuestion) { stored.withLock { $0.append(authorization) } }
    var all: [WriteQuestion] { stored.withLock { $0 } }
}
