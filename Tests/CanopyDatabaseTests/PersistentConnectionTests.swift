@testable import CanopyDatabase
import DataModel
import Dispatch
import Synchronization
import Testing
import Wire

/// The client's wire session against a real server: requests and pushes, and what survives a server restart.
@Suite("Persistent connection", .serialized)
struct PersistentConnectionTests {
    /// Records what the connection reports, for the test to wait on.
    final class Recorder: PersistentConnectionDelegate, @unchecked Sendable {
        // Touched on the connection's loop and read under the mutex.
        private let state = Mutex(State())
        struct State {
            var connects = 0
            var disconnects = 0
            var updates: [(ServerUpdate, Int?)] = []
            var outcomes: [String: RequestOutcome] = [:]
        }

        func connectionDidConnect(serverTimeOffset: Double) { state.withLock { $0.connects += 1 } }
        func connectionDidDisconnect() { state.withLock { $0.disconnects += 1 } }
        func connectionDidReceive(_ update: ServerUpdate, tag: Int?) { state.withLock { $0.updates.append((update, tag)) } }
        func connectionDidRevokeListen(path: Path, tag: Int?) {}

        func record(_ name: String) -> (RequestOutcome) -> Void {
            { outcome in self.state.withLock { $0.outcomes[name] = outcome } }
        }

        func read<T>(_ body: (State) -> T) -> T { state.withLock { body($0) } }

        /// The data the last overwrite pushed for `path`.
        func lastData(at path: Path) -> Node? {
            read { state in
                state.updates.reversed().lazy.compactMap { update -> Node? in
                    if case .overwrite(path, let data) = update.0 { return data }
                    return nil
                }.first
            }
        }
    }

    static func connection(to server: ServerUnderTest, loop: ConnectionLoop, delegate: Recorder)
        -> PersistentConnection
    {
        var settings = PersistentConnection.Settings(
            host: "127.0.0.1", port: Int(server.port), secure: false, namespace: "client-tests")
        settings.minimumBackoff = 0.05
        settings.maximumBackoff = 0.2
        let connection = PersistentConnection(settings: settings, loop: loop)
        loop.perform {
            connection.delegate = delegate
            connection.goOnline()
        }
        return connection
    }

    /// Waits (at most 10 s) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
        return condition()
    }

    static func put(_ path: String, _ json: String) throws -> ClientAction {
        .put(PutRequest(target: .node(try Path(path)), value: try JSONReader.readData(Array(json.utf8))))
    }

    static func node(_ json: String) throws -> Node {
        try JSONReader.readData(Array(json.utf8)).node
    }

    @Test("listens get the data and later changes; writes are acknowledged in order")
    func listenAndWrite() async throws {
        let server = try ServerUnderTest()
        let loop = ConnectionLoop()
        defer { loop.stop() }
        let recorder = Recorder()
        let connection = Self.connection(to: server, loop: loop, delegate: recorder)
        let path = try Path("/rooms/r1")
        loop.perform {
            connection.listen(ListenRequest(path: path), currentHash: { "" }, onComplete: recorder.record("listen"))
        }
        #expect(await Self.eventually { recorder.read { $0.outcomes["listen"]?.isOK == true } })
        loop.perform {
            connection.write(PreparedRequest(try! Self.put("/rooms/r1", #"{"title":"Lobby"}"#)), onComplete: recorder.record("w1"))
            connection.write(PreparedRequest(try! Self.put("/rooms/r1/title", #""Kitchen""#)), onComplete: recorder.record("w2"))
        }
        #expect(await Self.eventually { recorder.read { $0.outcomes["w2"]?.isOK == true } })
        #expect(recorder.read { $0.outcomes["w1"]?.isOK } == true)
        // Each change is pushed where it happened, after the listen's initial data.
        #expect(recorder.lastData(at: path) == (try Self.node(#"{"title":"Lobby"}"#)))
        #expect(recorder.lastData(at: try Path("/rooms/r1/title")) == (try Self.node(#""Kitchen""#)))
        loop.perform { connection.goOffline() }
    }

    @Test("a server restart costs nothing: listens are re-sent and writes made meanwhile go out in order")
    func surviveRestart() async throws {
        let server = try ServerUnderTest()
        let loop = ConnectionLoop()
        defer { loop.stop() }
        let recorder = Recorder()
        let connection = Self.connection(to: server, loop: loop, delegate: recorder)
        let path = try Path("/counter")
        loop.perform {
            connection.listen(ListenRequest(path: path), currentHash: { "" }, onComplete: recorder.record("listen"))
        }
        #expect(await Self.eventually { recorder.read { $0.connects == 1 && $0.outcomes["listen"] != nil } })
        server.stop()
        #expect(await Self.eventually { recorder.read { $0.disconnects == 1 } })
        loop.perform {
            for value in 1...3 {
                connection.write(PreparedRequest(try! Self.put("/counter", "\(value)")), onComplete: recorder.record("w\(value)"))
            }
        }
        try server.start()
        #expect(await Self.eventually { recorder.read { $0.outcomes["w3"]?.isOK == true } })
        #expect(recorder.read { state in (1...3).allSatisfy { state.outcomes["w\($0)"]?.isOK == true } })
        #expect(recorder.read { $0.connects } == 2)
        // The listen is held again: the last write's value was pushed on the new connection.
        #expect(await Self.eventually { recorder.lastData(at: path) == (try? Self.node("3")) })
        loop.perform { connection.goOffline() }
    }
}
