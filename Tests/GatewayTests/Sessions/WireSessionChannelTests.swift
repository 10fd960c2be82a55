@testable import Gateway
import Testing
import DataModel
import Wire

/// A wire session driven in memory through the channel seam (no sockets): what it sends, in what order, and what
/// it asks of its transport.
@Suite("wire session on a recording channel")
struct WireSessionChannelTests {
    @Test("the hello comes first, then each answer in request order, a listen's data before its ok")
    func helloThenAnswers() throws {
        let memory = try InMemoryGateway()
        let channel = RecordingChannel()
        let session = memory.openSession(on: channel)
        memory.onLoop {
            session.receive(request(1, "p", #"{"p":"/a","d":1}"#))
            session.receive(request(2, "q", #"{"p":"/a","h":""}"#))
            session.receive(request(3, "p", #"{"p":"/a","d":2}"#))
        }
        #expect(eventually { channel.messages.count >= 6 })
        let messages = channel.messages
        #expect(messages.first?.contains(#""t":"h""#) == true)
        #expect(messages.dropFirst().map(summary) == [
            "ok 1", "push /a 1", "ok 2", "push /a 2", "ok 3",
        ])
    }

    @Test("a session moved to another channel sends everything after the move there, and nothing twice")
    func movesToAnotherChannel() throws {
        let memory = try InMemoryGateway()
        let first = RecordingChannel()
        let second = RecordingChannel()
        let session = memory.openSession(on: first)
        memory.onLoop { session.receive(request(1, "q", #"{"p":"/m","h":""}"#)) }
        #expect(eventually { first.messages.contains { $0.contains(#""r":1"#) } })
        memory.onLoop {
            session.channel = second
            session.receive(request(2, "p", #"{"p":"/m","d":"x"}"#))
        }
        #expect(eventually { second.messages.count == 2 })
        #expect(second.messages.map(summary) == [#"push /m "x""#, "ok 2"])
        #expect(!first.messages.contains { $0.contains(#""r":2"#) })
    }

    @Test("a pipelining client is paused at half the outstanding limit and resumed at a quarter")
    func pausesOnOutstandingRequests() throws {
        let memory = try InMemoryGateway { $0.maxOutstandingRequestsPerConnection = 8 }
        let channel = RecordingChannel()
        let session = memory.openSession(on: channel)
        memory.onLoop {
            for number in 1...6 { session.receive(request(number, "p", #"{"p":"/n","d":\#(number)}"#)) }
        }
        #expect(eventually { channel.messages.count == 7 })
        #expect(channel.channelEvents == ["pause", "resume"])
    }

    @Test("a message that is not JSON ends the session with the error")
    func malformedMessageCloses() throws {
        let memory = try InMemoryGateway()
        let channel = RecordingChannel()
        let session = memory.openSession(on: channel)
        memory.onLoop { session.receive(Array("{not json".utf8)) }
        #expect(channel.channelEvents == ["close 1002"])
        #expect(channel.messages.last?.contains(#""t":"e""#) == true)
    }

    /// `ok N`, `push PATH DATA` or the raw message.
    private func summary(_ message: String) -> String {
        guard let value = try? JSONReader.readValue(Array(message.utf8)), case .object? = value["d"] else {
            return message
        }
        if case .number(let number)? = value["d"]?["r"] { return "ok \(Int(number))" }
        if case .string(let path)? = value["d"]?["b"]?["p"], let data = value["d"]?["b"]?["d"] {
            var writer = JSONWriter()
            writer.write(data)
            return "push \(path) \(String(decoding: writer.bytes, as: UTF8.self))"
        }
        return message
    }
}
