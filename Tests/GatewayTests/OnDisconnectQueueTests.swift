import DataModel
@testable import Gateway
import Store
import Testing

@Suite("onDisconnect queue")
struct OnDisconnectQueueTests {
    private func entries(_ queue: OnDisconnectQueue) -> [String] {
        queue.entries.map { entry in "\(entry.target.location)=\(json(entry.value.node))" }
    }

    @Test("remembering a location replaces what was remembered at and below it")
    func rememberReplaces() throws {
        var queue = OnDisconnectQueue()
        queue.remember(try writeValue("1"), at: .node(try path("/a/b")))
        queue.remember(try writeValue("2"), at: .node(try path("/c")))
        queue.remember(try writeValue(#"{"x":3}"#), at: .node(try path("/a")))
        #expect(entries(queue) == ["/c=2", #"/a={"x":3}"#])
    }

    @Test("cancelling drops the location and below, and splits a remembered ancestor keeping the siblings")
    func cancelSplits() throws {
        var queue = OnDisconnectQueue()
        queue.remember(try writeValue(#"{"x":{"p":1,"q":2},"y":{".sv":"timestamp"}}"#), at: .node(try path("/a")))
        queue.remember(try writeValue("true"), at: .node(try path("/b/c")))
        queue.forget(try path("/a/x/p"))
        queue.forget(try path("/b"))
        #expect(entries(queue) == ["/a/x/q=2", "/a/y=0"])
        #expect(queue.entries.last?.value.serverValues.map(\.path) == [Path.root])
    }

    @Test("the queued operations run as one root update in order")
    func write() throws {
        var queue = OnDisconnectQueue()
        queue.remember(try writeValue(#"{"state":"offline"}"#), at: .node(try path("/status/alice")))
        queue.remember(try writeValue("null"), at: .node(try path("/rooms/r1/members/alice")))
        guard case .update(let base, let updates) = queue.write else {
            Issue.record("expected an update")
            return
        }
        #expect(base == .root)
        #expect(updates.map(\.target) == [.node(try path("/status/alice")), .node(try path("/rooms/r1/members/alice"))])
    }
}
