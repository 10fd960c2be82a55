import CanopyDatabase
import Dispatch
import Foundation
import Synchronization
import Testing

/// The threading contract: every block runs on the database's callback queue (its own, or one the app passes in),
/// and a database nobody holds any more lets go of its connection.
@Suite("Threading", .serialized)
struct ThreadingTests {
    static func configuration(_ server: ServerUnderTest) -> DatabaseConfiguration {
        DatabaseConfiguration(host: "127.0.0.1", port: Int(server.port), namespace: "threading")
    }

    @Test("observers and completions run on the callback queue: the database's own, and an app's queue")
    func blocksRunOnTheCallbackQueue() async throws {
        let server = try ServerUnderTest()
        let appQueue = DispatchQueue(label: "app-callbacks")
        for queue in [nil, appQueue] {
            var configuration = Self.configuration(server)
            configuration.callbackQueue = queue
            let database = Database(configuration: configuration)
            let key = DispatchSpecificKey<String>()
            database.callbackQueue.setSpecific(key: key, value: "callbacks")
            let seen = Mutex<[String]>([])
            let reference = database.reference(withPath: "queue/\(queue == nil ? "own" : "app")")
            reference.observe(.value, with: { snapshot in
                seen.withLock { $0.append("value \(DispatchQueue.getSpecific(key: key) ?? "elsewhere")") }
            })
            let written = DispatchSemaphore(value: 0)
            reference.setValue("x") { error, _ in
                seen.withLock { $0.append("written \(error == nil) \(DispatchQueue.getSpecific(key: key) ?? "elsewhere")") }
                written.signal()
            }
            #expect(await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: written.wait(timeout: .now() + 10)) }
            } == .success)
            let all = seen.withLock { $0 }
            #expect(all.contains("written true callbacks"))
            #expect(!all.isEmpty && all.allSatisfy { $0.hasSuffix(" callbacks") })
        }
    }

    @Test("a database nobody holds disconnects: the server runs its onDisconnect operations")
    func releasedDatabaseDisconnects() async throws {
        let server = try ServerUnderTest()
        let watcher = Database(configuration: Self.configuration(server))
        let seen = Mutex<[String]>([])
        watcher.reference(withPath: "status").observe(.value, with: { snapshot in
            seen.withLock { $0.append("\(snapshot.value ?? "nil")") }
        })
        try await Self.registerAndRelease(server)
        for _ in 0..<1000 where seen.withLock({ $0.last }) != "gone" { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(seen.withLock { $0.last } == "gone")
    }

    /// A database that sets `status` and registers `"gone"` for it on disconnect, then is dropped.
    private static func registerAndRelease(_ server: ServerUnderTest) async throws {
        let leaving = Database(configuration: configuration(server))
        try await leaving.reference(withPath: "status").setValue("here")
        try await leaving.reference(withPath: "status").onDisconnectSetValue("gone")
    }
}
