import Testing

@testable import LoadTester

/// The Redis (RESP2) and NATS messages `canopy bench` reads, found in byte streams cut anywhere.
@Suite("Redis and NATS protocol scanning")
struct PeerProtocolsTests {
    private func scanAll(_ text: String, redis: Bool) -> (messages: [String], rest: Int, malformed: String?) {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            var position = 0
            var messages: [String] = []
            while true {
                let scan = redis ? PeerProtocols.nextRedis(in: buffer, from: position)
                    : PeerProtocols.nextNATS(in: buffer, from: position)
                switch scan {
                case .incomplete: return (messages, buffer.count - position, nil)
                case .malformed(let problem): return (messages, buffer.count - position, problem)
                case .message(let message, let end):
                    if case .payload(let range) = message {
                        messages.append("payload " + String(decoding: buffer[range], as: UTF8.self))
                    } else {
                        messages.append("\(message)")
                    }
                    position = end
                }
            }
        }
    }

    @Test("RESP: subscribe confirmations, pushed messages, PUBLISH replies and errors, cut anywhere")
    func redis() {
        let stream = "*3\r\n$9\r\nsubscribe\r\n$5\r\nroom0\r\n:1\r\n"
            + "*3\r\n$7\r\nmessage\r\n$5\r\nroom0\r\n$9\r\n{\"seq\":1}\r\n" + ":12\r\n" + "-ERR wrong\r\n"
        let whole = scanAll(stream, redis: true)
        #expect(whole.messages == ["subscribed", "payload {\"seq\":1}", "acknowledged", "error(\"ERR wrong\")"])
        #expect(whole.rest == 0 && whole.malformed == nil)
        for cut in 1..<stream.utf8.count {
            let prefix = String(decoding: Array(stream.utf8)[..<cut], as: UTF8.self)
            let partial = scanAll(prefix, redis: true)
            #expect(partial.malformed == nil, "cut at \(cut)")
            #expect(whole.messages.starts(with: partial.messages), "cut at \(cut)")
        }
        #expect(scanAll("$5\r\nhello\r\n", redis: true).malformed != nil)
        #expect(scanAll("*999\r\n", redis: true).malformed != nil)
        #expect(scanAll("*3\r\n$-5\r\n", redis: true).malformed != nil)
    }

    @Test("NATS: INFO, MSG with and without reply subjects, PING, PONG and -ERR, cut anywhere")
    func nats() {
        let stream = "INFO {\"server_id\":\"x\"}\r\n" + "PONG\r\n" + "MSG bench.room0 1 9\r\n{\"seq\":1}\r\n"
            + "MSG bench.room0 1 reply.to 2\r\nhi\r\n" + "PING\r\n" + "-ERR 'Unknown Protocol Operation'\r\n"
        let whole = scanAll(stream, redis: false)
        #expect(whole.messages == [
            "other", "subscribed", "payload {\"seq\":1}", "payload hi", "ping",
            "error(\"-ERR \\'Unknown Protocol Operation\\'\")",
        ])
        #expect(whole.rest == 0 && whole.malformed == nil)
        for cut in 1..<stream.utf8.count {
            let prefix = String(decoding: Array(stream.utf8)[..<cut], as: UTF8.self)
            let partial = scanAll(prefix, redis: false)
            #expect(partial.malformed == nil, "cut at \(cut)")
            #expect(whole.messages.starts(with: partial.messages), "cut at \(cut)")
        }
        #expect(scanAll("HELLO\r\n", redis: false).malformed != nil)
        #expect(scanAll("MSG a 1 x\r\n", redis: false).malformed != nil)
        #expect(scanAll(String(repeating: "x", count: 5000), redis: false).malformed != nil)
    }

    @Test("builds SUBSCRIBE, PUBLISH, SUB and PUB as the servers expect them")
    func building() {
        var redis: [UInt8] = []
        PeerProtocols.appendRedisSubscribe(topic: Array("room0".utf8), to: &redis)
        #expect(String(decoding: redis, as: UTF8.self) == "*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nroom0\r\n")
        redis.removeAll()
        PeerProtocols.appendRedisPublishHead(topic: Array("room0".utf8), payloadBytes: 64, to: &redis)
        #expect(String(decoding: redis, as: UTF8.self) == "*3\r\n$7\r\nPUBLISH\r\n$5\r\nroom0\r\n$64\r\n")
        var nats: [UInt8] = []
        PeerProtocols.appendNATSSubscribe(subjects: [Array("bench.room0".utf8), Array("bench.room1".utf8)], to: &nats)
        PeerProtocols.appendNATSPublishHead(subject: Array("bench.room0".utf8), payloadBytes: 64, to: &nats)
        #expect(String(decoding: nats, as: UTF8.self)
            == "SUB bench.room0 1\r\nSUB bench.room1 2\r\nPING\r\nPUB bench.room0 64\r\n")
    }
}
