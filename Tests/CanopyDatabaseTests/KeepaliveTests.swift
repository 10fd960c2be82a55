@testable import CanopyDatabase
import DataModel
import Dispatch
import Testing
import Wire

/// The keepalive the SDKs send (a text `"0"` after a silence), counted by a bare WebSocket peer: the real server
/// drops it before anything a test could observe.
@Suite("Keepalive", .serialized)
struct KeepaliveTests {
    static let interval = 0.3

    /// The peer's messages once `condition` holds on them (at most 10 s).
    static func messages(of peer: RawWebSocketPeer,
                         when condition: ([RawWebSocketPeer.Message]) -> Bool) async -> [RawWebSocketPeer.Message]
    {
        for _ in 0..<1000 where !condition(peer.messages) { try? await Task.sleep(nanoseconds: 10_000_000) }
        return peer.messages
    }

    static func keepalives(_ messages: [RawWebSocketPeer.Message]) -> Int {
        messages.count { $0.text == "0" }
    }

    /// The silence before each keepalive, in seconds (since the previous message, or since the first one sent).
    static func silences(_ messages: [RawWebSocketPeer.Message], since start: UInt64) -> [Double] {
        messages.indices.filter { messages[$0].text == "0" }.map { index in
            let previous = index == 0 ? start : messages[index - 1].arrived
            return Double(messages[index].arrived &- previous) / 1e9
        }
    }

    @Test("an idle connection sends \"0\" every interval, and never while requests keep the connection busy")
    func keepaliveAfterSilenceOnly() async throws {
        let peer = try RawWebSocketPeer()
        defer { peer.stop() }
        let loop = ConnectionLoop()
        defer { loop.stop() }
        var settings = PersistentConnection.Settings(host: "127.0.0.1", port: Int(peer.port), secure: false,
                                                     namespace: "keepalive")
        settings.keepaliveSeconds = Self.interval
        let connection = PersistentConnection(settings: settings, loop: loop)
        let connected = DispatchTime.now().uptimeNanoseconds
        loop.perform { connection.goOnline() }

        // Idle: keepalives come, each after a silence of about the interval.
        let idle = await Self.messages(of: peer) { Self.keepalives($0) >= 3 }
        #expect(Self.keepalives(idle) >= 3)
        #expect(idle.allSatisfy { $0.text == "0" })
        for silence in Self.silences(idle, since: connected) { #expect(silence >= Self.interval * 0.8) }

        // Busy: a request every 50 ms for 1.2 s (the peer answers none): no keepalive is sent early.
        let request = try PutRequest(target: .node(Path("/busy")), value: JSONReader.readData(Array("1".utf8)))
        let before = peer.messages.count
        for _ in 0..<24 {
            loop.perform { connection.write(PreparedRequest(.put(request)), onComplete: { _ in }) }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let busy = await Self.messages(of: peer) { $0.count - before >= 24 }
        #expect(busy.count - before >= 24)
        for silence in Self.silences(busy, since: connected) { #expect(silence >= Self.interval * 0.8) }
        loop.perform { connection.goOffline() }
    }
}
