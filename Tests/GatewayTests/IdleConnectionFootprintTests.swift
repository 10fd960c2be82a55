import Testing
import TestSupport
import Transport
@testable import Gateway
@testable import HTTPServer

/// The objects an idle WebSocket connection with one listen holds, each within the malloc chunk it is budgeted
/// (docs/benchmarks.md, "Memory per idle connection"): a stored property added to one of them grows every idle
/// connection, and this says so before a benchmark has to.
@Suite("Idle connection footprint")
struct IdleConnectionFootprintTests {
    /// A class of known layout: a 16-byte object header and one 8-byte field.
    private final class KnownLayout {
        var field: Int64 = 0
    }

    @Test("the metadata reading agrees with a class of known layout")
    func knownLayout() {
        #expect(InstanceFootprint.instanceSize(of: KnownLayout.self) == 24)
        #expect(InstanceFootprint.chunk(of: KnownLayout.self) == 32)
    }

    @Test("each object of an idle connection fits its malloc chunk", arguments: [
        (Connection.self as AnyClass, "Connection", 208),
        (ServerConnection.self as AnyClass, "ServerConnection (until the upgrade)", 64),
        (WebSocketSession.self as AnyClass, "WebSocketSession", 160),
        (WireSession.self as AnyClass, "WireSession", 192),
        (Subscription.self as AnyClass, "Subscription", 96),
    ])
    func budget(type: AnyClass, name: String, chunkBudget: Int) {
        let size = InstanceFootprint.instanceSize(of: type)
        let chunk = InstanceFootprint.chunk(of: type)
        #expect(chunk <= chunkBudget, "\(name): \(size) bytes take a \(chunk)-byte chunk, over its \(chunkBudget)")
    }
}
