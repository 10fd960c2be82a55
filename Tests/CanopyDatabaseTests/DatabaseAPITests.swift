import CanopyDatabase
import Dispatch
import Foundation
import Synchronization
import Testing

/// The public API against a real server: the flows of Firebase's Swift guides.
@Suite("Database API", .serialized)
struct DatabaseAPITests {
    /// Collects what blocks receive.
    final class Log: @unchecked Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    static func database(_ server: ServerUnderTest, namespace: String = "api") -> Database {
        Database(configuration: DatabaseConfiguration(host: "127.0.0.1", port: Int(server.port), namespace: namespace))
    }

    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
        return condition()
    }

    @Test("two clients see each other's writes, child events in order with the previous sibling's key")
    func childEvents() async throws {
        let server = try ServerUnderTest()
        let writer = Self.database(server)
        let reader = Self.database(server)
        let log = Log()
        let cars = reader.reference(withPath: "cars")
        cars.observe(.childAdded, andPreviousSiblingKeyWith: { snapshot, previous in
            log.add("added \(snapshot.key) after \(previous ?? "-")")
        })
        cars.observe(.childChanged, with: { log.add("changed \($0.key) \($0.childSnapshot(forPath: "price").value ?? "-")") })
        cars.observe(.childRemoved, with: { log.add("removed \($0.key)") })
        cars.observe(.value, with: { log.add("value \($0.childrenCount)") })
        #expect(await Self.eventually { log.all == ["value 0"] })
        try await writer.reference(withPath: "cars/a").setValue(["model": "Aero", "price": 10])
        try await writer.reference(withPath: "cars/b").setValue(["model": "Bolt", "price": 20])
        try await writer.reference(withPath: "cars/a").updateChildValues(["price": 12])
        try await writer.reference(withPath: "cars/b").removeValue()
        #expect(await Self.eventually { log.all.count == 9 })
        #expect(log.all == [
            "value 0", "added a after -", "value 1", "added b after a", "value 2", "changed a 12", "value 2",
            "removed b", "value 1",
        ])
    }

    @Test("a write shows locally at once, and the completion follows the server's answer")
    func latencyCompensation() async throws {
        let server = try ServerUnderTest()
        let database = Self.database(server)
        let log = Log()
        let ref = database.reference(withPath: "profile/name")
        ref.observe(.value, with: { log.add("\($0.value ?? "nil")") })
        #expect(await Self.eventually { log.all == ["nil"] })
        database.goOffline()
        ref.setValue("Ada") { error, _ in log.add("acknowledged \(error == nil)") }
        // Offline: the local observer sees the write, the server has not answered.
        #expect(await Self.eventually { log.all == ["nil", "Ada"] })
        database.goOnline()
        #expect(await Self.eventually { log.all.last == "acknowledged true" })
        let other = Self.database(server)
        #expect(try await other.reference(withPath: "profile/name").getData().value as? String == "Ada")
    }

    @Test("a write the rules deny is shown at once, then rolled back with the error")
    func rollback() async throws {
        let server = try ServerUnderTest(rules: #"{"rules": {".read": true, "open": {".write": true}}}"#)
        let database = Self.database(server)
        let log = Log()
        let ref = database.reference(withPath: "closed/name")
        ref.observe(.value, with: { log.add("\($0.value ?? "nil")") })
        #expect(await Self.eventually { log.all == ["nil"] })
        ref.setValue("Ada") { error, _ in log.add("error \((error as? DatabaseError)?.status ?? "none")") }
        #expect(await Self.eventually { log.all.count == 4 })
        #expect(log.all == ["nil", "Ada", "nil", "error permission_denied"])
        // Allowed writes are unaffected.
        try await database.reference(withPath: "open/name").setValue("Ada")
    }

    @Test("over TLS (wss), trusting the server's certificate")
    func secure() async throws {
        let server = try ServerUnderTest(tls: true)
        var configuration = DatabaseConfiguration(host: "127.0.0.1", port: Int(server.tlsPort), namespace: "tls",
                                                  secure: true)
        configuration.trustedCertificatesPath = server.certificatePath
        let database = Database(configuration: configuration)
        try await database.reference(withPath: "secret").setValue("sealed")
        #expect(try await database.reference(withPath: "secret").getData().value as? String == "sealed")
    }

    @Test("the credential is sent on every connection, so rules keep letting the client in after a restart")
    func credentialAcrossRestarts() async throws {
        let server = try ServerUnderTest(rules: #"{"rules": {".read": false, ".write": false}}"#)
        var configuration = DatabaseConfiguration(host: "127.0.0.1", port: Int(server.port), namespace: "auth")
        configuration.authToken = "owner"  // the admin credential of a loopback server without one configured
        let admin = Database(configuration: configuration)
        let anonymous = Self.database(server, namespace: "auth")
        try await admin.reference(withPath: "a").setValue(1)
        await #expect(throws: DatabaseError.self) { try await anonymous.reference(withPath: "a").setValue(2) }
        server.stop()
        try server.start()
        try await admin.reference(withPath: "a").setValue(3)
        #expect(try await admin.reference(withPath: "a").getData().value as? NSNumber == 3)
    }

    @Test("transactions from ten clients end at the exact total")
    func transactions() async throws {
        let server = try ServerUnderTest()
        let clients = (0..<10).map { _ in Self.database(server) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask {
                    for _ in 0..<5 {
                        let (committed, _) = try await client.reference(withPath: "counter").runTransactionBlock { data in
                            data.value = ((data.value as? NSNumber)?.intValue ?? 0) + 1
                            return .success(withValue: data)
                        }
                        #expect(committed)
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = try await clients[0].reference(withPath: "counter").getData().value as? NSNumber
        #expect(total?.intValue == 50)
    }

    @Test("Codable values round-trip")
    func codable() async throws {
        struct Car: Codable, Equatable {
            var model: String
            var price: Double
            var tags: [String]
        }
        let server = try ServerUnderTest()
        let database = Self.database(server)
        let car = Car(model: "Aero", price: 12.5, tags: ["fast", "red"])
        let done = Log()
        try database.reference(withPath: "cars/a").setValue(from: car) { error in done.add("\(error == nil)") }
        #expect(await Self.eventually { done.all == ["true"] })
        let read = try await database.reference(withPath: "cars/a").getData()
        #expect(try read.data(as: Car.self) == car)
    }

    @Test("a limited query moves its window: the child leaving is removed, the one entering added")
    func limitedQuery() async throws {
        let server = try ServerUnderTest()
        let database = Self.database(server)
        for (key, score) in [("a", 1), ("b", 5), ("c", 3)] {
            try await database.reference(withPath: "scores/\(key)").setValue(["score": score])
        }
        let log = Log()
        let top = database.reference(withPath: "scores").queryOrdered(byChild: "score").queryLimited(toLast: 2)
        top.observe(.childAdded, andPreviousSiblingKeyWith: { log.add("added \($0.key) after \($1 ?? "-")") })
        top.observe(.childRemoved, with: { log.add("removed \($0.key)") })
        #expect(await Self.eventually { log.all == ["added c after -", "added b after c"] })
        try await database.reference(withPath: "scores/d").setValue(["score": 4])
        #expect(await Self.eventually { log.all.count == 4 })
        #expect(log.all.suffix(2) == ["removed c", "added d after -"])
        let snapshot = try await top.getData()
        #expect(snapshot.children.map(\.key) == ["d", "b"])
    }

    @Test("presence: onDisconnect writes run when the client goes away; .info/connected follows")
    func presence() async throws {
        let server = try ServerUnderTest()
        let leaving = Self.database(server)
        let watcher = Self.database(server)
        let connected = Log()
        leaving.reference(withPath: ".info/connected").observe(.value, with: { connected.add("\($0.value ?? "nil")") })
        #expect(await Self.eventually { connected.all.last == "true" })
        let status = leaving.reference(withPath: "status/ada")
        try await status.setValue("online")
        let registered = Log()
        status.onDisconnectSetValue("offline") { error, _ in registered.add("\(error == nil)") }
        #expect(await Self.eventually { registered.all == ["true"] })
        let seen = Log()
        watcher.reference(withPath: "status/ada").observe(.value, with: { seen.add("\($0.value ?? "nil")") })
        #expect(await Self.eventually { seen.all == ["online"] })
        leaving.goOffline()
        #expect(await Self.eventually { seen.all == ["online", "offline"] })
        #expect(await Self.eventually { connected.all.last == "false" })
    }

    @Test("ServerValue.increment and timestamp are filled in by the server")
    func serverValues() async throws {
        let server = try ServerUnderTest()
        let database = Self.database(server)
        let visits = database.reference(withPath: "visits")
        try await visits.setValue(ServerValue.increment(1))
        try await visits.setValue(ServerValue.increment(1))
        try await visits.setValue(ServerValue.increment(3))
        // Numbers 0 and 1 stay numbers, booleans stay booleans (on Linux NSNumber(1) also casts to Bool).
        let mixed = database.reference(withPath: "mixed")
        try await mixed.setValue(["one": NSNumber(value: 1), "zero": 0, "yes": true, "no": NSNumber(value: false)])
        let read = try await mixed.getData().value as? [String: Any]
        #expect(read?["one"] is NSNumber && (read?["one"] as? NSNumber)?.intValue == 1 && !(read?["one"] is Bool && type(of: read?["one"] as Any) == Bool.self))
        #expect(type(of: read?["yes"] ?? 0) == Bool.self && type(of: read?["no"] ?? 0) == Bool.self)
        #expect((read?["zero"] as? NSNumber)?.intValue == 0 && type(of: read?["zero"] ?? false) != Bool.self)
        try await database.reference(withPath: "seen").setValue(ServerValue.timestamp())
        #expect((try await visits.getData().value as? NSNumber)?.intValue == 5)
        let seen = (try await database.reference(withPath: "seen").getData().value as? NSNumber)?.doubleValue ?? 0
        #expect(abs(seen - Date().timeIntervalSince1970 * 1000) < 60_000)
    }
}
