import DataModel
import Store
import Testing

@Suite("Store writes")
struct StoreWriteTests {
    @Test("a set is visible at its path and from its ancestors")
    func setIsVisible() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/users/alice/name", #""Alice""#))
        #expect(await store.value(at: try Fixture.path("/users/alice/name")) == (try Fixture.node(#""Alice""#)))
        #expect(await store.value(at: try Fixture.path("/users")) == (try Fixture.node(#"{"alice":{"name":"Alice"}}"#)))
        #expect(await store.tree == (try Fixture.node(#"{"users":{"alice":{"name":"Alice"}}}"#)))
    }

    @Test("removing the last child removes the emptied parents")
    func removalPrunesParents() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/a/b/c", "1"))
        await store.applyOrFail(try Fixture.set("/x", "2"))
        await store.applyOrFail(.remove(try Fixture.path("/a/b/c")))
        #expect(await store.tree == (try Fixture.node(#"{"x":2}"#)))
    }

    @Test("a timestamp server value resolves to the store's clock, at any depth")
    func timestamp() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/a/b/when", #"{".sv":"timestamp"}"#))
        await store.applyOrFail(try Fixture.set("/", #"{"top":{".sv":"timestamp"},"a":{"b":{"x":1}}}"#))
        let expected = try Fixture.node(#"{"top":1700000000000,"a":{"b":{"x":1}}}"#)
        #expect(await store.tree == expected)
    }

    @Test("an increment adds to a number and replaces anything else")
    func increment() async throws {
        let store = try Fixture.memoryStore()
        let increment = #"{".sv":{"increment":5}}"#
        await store.applyOrFail(try Fixture.set("/c/missing", increment))
        await store.applyOrFail(try Fixture.set("/c/number", "10"))
        await store.applyOrFail(try Fixture.set("/c/number", increment))
        await store.applyOrFail(try Fixture.set("/c/text", #""x""#))
        await store.applyOrFail(try Fixture.set("/c/text", increment))
        await store.applyOrFail(try Fixture.set("/c/object", #"{"y":1}"#))
        await store.applyOrFail(try Fixture.set("/c/object", increment))
        #expect(await store.value(at: try Fixture.path("/c")) ==
            (try Fixture.node(#"{"missing":5,"number":15,"text":5,"object":5}"#)))
    }

    @Test("increments of one update resolve against the data before the update")
    func incrementsInOneUpdate() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/", #"{"p":{"n":1},"q":{"n":2}}"#))
        let increment = #"{".sv":{"increment":1}}"#
        await store.applyOrFail(try Fixture.update("/", [("p/n", increment), ("q/n", increment), ("r/n", increment)]))
        #expect(await store.tree == (try Fixture.node(#"{"p":{"n":2},"q":{"n":3},"r":{"n":1}}"#)))
    }

    @Test("an increment that overflows the number range is rejected and changes nothing")
    func incrementOverflow() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/big", "1.7976931348623157e308"))
        let result = await store.apply(try Fixture.set("/big", #"{".sv":{"increment":1.7976931348623157e308}}"#))
        guard case .failure(.serverValue) = result else {
            Issue.record("expected a server value error, got \(result)")
            return
        }
        #expect(await store.value(at: try Fixture.path("/big")) == (try Fixture.node("1.7976931348623157e308")))
    }

    @Test("a compare-and-set with the current hash applies")
    func compareAndSetMatches() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/counter", "5"))
        let current = await store.value(at: try Fixture.path("/counter"))
        let write = StoreWrite.set(.node(try Fixture.path("/counter")), try Fixture.value("6"),
                                   expectedHash: Store.hash(of: current))
        await store.applyOrFail(write)
        #expect(await store.value(at: try Fixture.path("/counter")) == (try Fixture.node("6")))
    }

    @Test("a compare-and-set with another hash is rejected as stale with the current value",
          arguments: ["/counter", "/"])
    func compareAndSetStale(path: String) async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/counter", "5"))
        let location = try Fixture.path(path)
        let current = await store.value(at: location)
        let stale = Store.hash(of: try Fixture.node("4"))
        let result = await store.apply(.set(.node(location), try Fixture.value("6"), expectedHash: stale))
        #expect(result.failure == .stale(current: current))
        #expect(await store.value(at: location) == current)
    }

    @Test("compare-and-set uses the SDK's hash: a client's hash of 5 matches the stored 5")
    func sdkHashVector() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/n", "5"))
        // wire-protocol.md §8.3: the hash of the leaf 5.
        let write = StoreWrite.set(.node(try Fixture.path("/n")), try Fixture.value("6"),
                                   expectedHash: "w28swksk9+tXf5jEdS9R5oSFAv8=")
        await store.applyOrFail(write)
        #expect(await store.value(at: try Fixture.path("/n")) == (try Fixture.node("6")))
        #expect(Store.hash(of: try Fixture.node(#"{"name":"alice","score":10}"#)) == "VXyngTbGPVLJVIlCuwPFLFZsoDY=")
    }

    @Test("an empty expected hash succeeds only on an empty location")
    func compareAndSetOnEmpty() async throws {
        let store = try Fixture.memoryStore()
        let location = try Fixture.path("/lock/owner")
        let first = await store.apply(.set(.node(location), try Fixture.value(#""a""#), expectedHash: ""))
        let second = await store.apply(.set(.node(location), try Fixture.value(#""b""#), expectedHash: ""))
        #expect(first.failure == nil)
        #expect(second.failure == .stale(current: try Fixture.node(#""a""#)))
    }

    @Test("a priority write sets the priority of an existing node and does nothing on an empty one")
    func priorityWrites() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/a/b", #""x""#))
        await store.applyOrFail(try Fixture.set("/a/b/.priority", "3"))
        await store.applyOrFail(try Fixture.set("/a/.priority", #""p""#))
        await store.applyOrFail(try Fixture.set("/missing/.priority", "1"))
        await store.applyOrFail(try Fixture.set("/.priority", "9"))
        #expect(await store.tree ==
            (try Fixture.node(#"{"a":{"b":{".value":"x",".priority":3},".priority":"p"},".priority":9}"#)))
        let invalid = await store.apply(try Fixture.set("/a/.priority", "true"))
        #expect(invalid.failure == .invalidPriority)
    }

    @Test("a set replaces the priority and an update keeps the parent's")
    func setAndUpdatePriorities() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/a", #"{"x":1,".priority":5}"#))
        await store.applyOrFail(try Fixture.update("/a", [("y", "2")]))
        #expect(await store.value(at: try Fixture.path("/a")) == (try Fixture.node(#"{"x":1,"y":2,".priority":5}"#)))
        await store.applyOrFail(try Fixture.set("/a", #"{"z":3}"#))
        #expect(await store.value(at: try Fixture.path("/a")) == (try Fixture.node(#"{"z":3}"#)))
    }

    @Test("writing below a leaf turns it into an object that keeps the leaf's priority")
    func writeBelowLeaf() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/a", #"{".value":"leaf",".priority":7}"#))
        await store.applyOrFail(.remove(try Fixture.path("/a/b/c")))
        #expect(await store.tree == (try Fixture.node(#"{"a":{".value":"leaf",".priority":7}}"#)))
        await store.applyOrFail(try Fixture.set("/a/b/c", "1"))
        await store.applyOrFail(try Fixture.set("/a/d/e", "2"))
        #expect(await store.tree == (try Fixture.node(#"{"a":{"b":{"c":1},"d":{"e":2},".priority":7}}"#)))
        await store.applyOrFail(.remove(try Fixture.path("/a/b/c")))
        await store.applyOrFail(.remove(try Fixture.path("/a/d/e")))
        #expect(await store.tree == .empty)
    }

    @Test("a location keeps every child as it grows to hundreds of children")
    func manyChildren() async throws {
        let store = try Fixture.memoryStore()
        for index in 0..<300 {
            await store.applyOrFail(.set(try Fixture.path("/list/item\(index)"), Node(.number(Double(index)))))
        }
        #expect(await store.value(at: try Fixture.path("/list")).childCount == 300)
        await store.applyOrFail(try Fixture.update("/", (0..<300).map { ("wide\($0)", "1") }))
        #expect(await store.tree.childCount == 301)
    }

    @Test("a query read returns the window of children without the location's priority")
    func queryRead() async throws {
        let store = try Fixture.memoryStore()
        await store.applyOrFail(try Fixture.set("/scores", #"{"a":{"s":5},"b":{"s":1},"c":{"s":9},".priority":1}"#))
        await store.applyOrFail(try Fixture.set("/top", "1"))
        let query = QueryParams(index: .child(try Fixture.path("s")), limit: 2, anchor: .last)
        let window: Node = await withCheckedContinuation { continuation in
            store.read(Fixture.scores, query: query) { continuation.resume(returning: $0) }
        }
        #expect(window == (try Fixture.node(#"{"a":{"s":5},"c":{"s":9}}"#)))
        let everything: Node = await withCheckedContinuation { continuation in
            store.read(.root, query: .all) { continuation.resume(returning: $0) }
        }
        #expect(everything == (await store.tree))
    }

    @Test("change records carry old and new values in apply order, before the completion")
    func changeRecords() async throws {
        let records = Locked<[ChangeRecord]>([])
        let store = try Fixture.memoryStore() { record in
            records.withLock { $0.append(record) }
        }
        await store.applyOrFail(try Fixture.set("/a/x", "1"))
        #expect(records.withLock { $0.count } == 1)
        await store.applyOrFail(try Fixture.set("/a/x", "2"))
        let outcome = await store.applyOrFail(try Fixture.update("/", [("a/x", "3"), ("b", "4"), ("c", "5")]))
        let all = records.withLock { $0 }
        let first = try #require(all.first)
        #expect(first.changes == [Change(path: try Fixture.path("/a/x"), oldValue: .empty,
                                         newValue: try Fixture.node("1"))])
        #expect(all[1].changes.first?.oldValue == (try Fixture.node("1")))
        #expect(all[1].sequence == first.sequence + 1)
        let update = all.dropFirst(2)
        #expect(update.count == 1, "a multi-path update is reported once")
        #expect(update.allSatisfy { $0.changes == outcome?.changes && $0.sequence == first.sequence + 2 })
        #expect(outcome?.changes.map(\.newValue) ==
            [try Fixture.node("3"), try Fixture.node("4"), try Fixture.node("5")])
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
