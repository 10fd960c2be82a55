import CanopyDatabase
import Foundation
import Testing

/// The rest of the API surface, each call against the real server.
@Suite("Database API surface", .serialized)
struct APICoverageTests {
    typealias Log = DatabaseAPITests.Log

    static func eventually(_ condition: () -> Bool) async -> Bool { await DatabaseAPITests.eventually(condition) }

    @Test("removeObserver and removeAllObservers stop events")
    func removingObservers() async throws {
        let server = try ServerUnderTest()
        let database = DatabaseAPITests.database(server)
        let log = Log()
        let ref = database.reference(withPath: "watched")
        let handle = ref.observe(.value, with: { log.add("a \($0.value ?? "nil")") })
        ref.observe(.value, with: { log.add("b \($0.value ?? "nil")") })
        #expect(await Self.eventually { log.all.count == 2 })
        ref.removeObserver(withHandle: handle)
        try await ref.setValue(1)
        #expect(await Self.eventually { log.all.contains("b 1") })
        #expect(!log.all.contains("a 1"))
        ref.removeAllObservers()
        try await ref.setValue(2)
        try await Task.sleep(nanoseconds: 100_000_000)  // an event, if any, would have arrived by now
        #expect(!log.all.contains("b 2"))
    }

    @Test("priorities order children and come back on snapshots")
    func priorities() async throws {
        let server = try ServerUnderTest()
        let database = DatabaseAPITests.database(server)
        let list = database.reference(withPath: "ranked")
        try await list.child("x").setValue("last", andPriority: 3)
        try await list.child("y").setValue("first", andPriority: 1)
        try await list.child("z").setValue("middle", andPriority: 2)
        let snapshot = try await list.queryOrderedByPriority().getData()
        #expect(snapshot.children.map(\.key) == ["y", "z", "x"])
        #expect((snapshot.childSnapshot(forPath: "x").priority as? NSNumber)?.intValue == 3)
        #expect(snapshot.hasChild("z") && !snapshot.hasChild("w") && snapshot.exists())
        #expect(!(try await list.child("w").getData().exists()))
    }

    @Test("startAfter, endBefore and equalTo select as the SDKs do")
    func rangeQueries() async throws {
        let server = try ServerUnderTest()
        let database = DatabaseAPITests.database(server)
        let scores = database.reference(withPath: "scores")
        try await scores.setValue(["a": 1, "b": 2, "c": 3, "d": 2])
        let byValue = scores.queryOrderedByValue()
        #expect(try await byValue.queryStarting(afterValue: 2).getData().children.map(\.key) == ["c"])
        #expect(try await byValue.queryEnding(beforeValue: 2).getData().children.map(\.key) == ["a"])
        #expect(try await byValue.queryEqual(toValue: 2).getData().children.map(\.key) == ["b", "d"])
        #expect(try await scores.queryOrderedByKey().queryLimited(toFirst: 2).getData().children.map(\.key) == ["a", "b"])
    }

    @Test("a transaction reads and writes children, and an abort changes nothing")
    func transactionChildren() async throws {
        let server = try ServerUnderTest()
        let database = DatabaseAPITests.database(server)
        let cart = database.reference(withPath: "cart")
        try await cart.setValue(["apples": 2, "pears": 1])
        let (committed, snapshot) = try await cart.runTransactionBlock { data in
            for child in data.children {
                child.value = ((child.value as? NSNumber)?.intValue ?? 0) * 10
            }
            data.childData(byAppendingPath: "plums").value = 5
            return .success(withValue: data)
        }
        #expect(committed)
        #expect(snapshot.value as? [String: Int] == ["apples": 20, "pears": 10, "plums": 5])
        let (aborted, unchanged) = try await cart.runTransactionBlock { _ in .abort() }
        #expect(!aborted)
        #expect(unchanged.childrenCount == 3)
    }

    @Test("onDisconnect updates and removals run, cancelled ones do not")
    func onDisconnectOperations() async throws {
        let server = try ServerUnderTest()
        let leaving = DatabaseAPITests.database(server, namespace: "od")
        let watcher = DatabaseAPITests.database(server, namespace: "od")
        let room = leaving.reference(withPath: "room")
        try await room.setValue(["alice": "here", "bob": "here", "carol": "here"])
        try await room.onDisconnectUpdateChildValues(["alice": "gone"])
        try await room.child("bob").onDisconnectRemoveValue()
        try await room.child("carol").onDisconnectSetValue("gone")
        try await room.child("carol").cancelDisconnectOperations()
        leaving.goOffline()
        let log = Log()
        watcher.reference(withPath: "room").observe(.value, with: { snapshot in
            if (snapshot.value as? [String: String]) == ["alice": "gone", "carol": "here"] { log.add("done") }
        })
        #expect(await Self.eventually { log.all == ["done"] })
    }

    @Test("a server restart loses no listen and no write made while it was down")
    func serverRestart() async throws {
        let server = try ServerUnderTest()
        let client = DatabaseAPITests.database(server, namespace: "restart")
        let log = Log()
        client.reference(withPath: "doc").observe(.value, with: { log.add("\($0.value ?? "nil")") })
        #expect(await Self.eventually { log.all == ["nil"] })
        server.stop()
        client.reference(withPath: "doc").setValue("written offline") { error, _ in log.add("ack \(error == nil)") }
        #expect(await Self.eventually { log.all == ["nil", "written offline"] })
        try server.start()
        #expect(await Self.eventually { log.all.contains("ack true") })
        // The listen is back: another client's write reaches it.
        let other = DatabaseAPITests.database(server, namespace: "restart")
        #expect(try await other.reference(withPath: "doc").getData().value as? String == "written offline")
        try await other.reference(withPath: "doc").setValue("from another client")
        #expect(await Self.eventually { log.all.last == "from another client" })
    }

    @Test(".info/serverTimeOffset and the events AsyncSequence")
    func infoAndEvents() async throws {
        let server = try ServerUnderTest()
        let database = DatabaseAPITests.database(server)
        let offset = try await database.reference(withPath: ".info/serverTimeOffset").observeSingleEvent(of: .value)
        #expect(abs((offset.value as? NSNumber)?.doubleValue ?? 1e9) < 60_000)
        let messages = database.reference(withPath: "chat")
        let writer = Task {
            for text in ["hi", "there"] { try await messages.childByAutoId().setValue(text) }
        }
        var received: [String] = []
        for try await event in messages.events(.childAdded) {
            received.append(event.snapshot.value as? String ?? "?")
            if received.count == 2 { break }
        }
        try await writer.value
        #expect(received == ["hi", "there"])
    }
}
