import Testing

@testable import WSLoad

/// Feeds server bytes to a subscriber connection of a real worker (no socket involved: nothing here makes the
/// subscriber send) and checks what it counted.
@Suite("Subscriber frame scanning")
struct SubscriberScanTests {
    /// One unmasked server text frame (RFC 6455 §5.2); `opcode` 0 continues a fragmented message.
    static func frame(_ payload: [UInt8], opcode: UInt8 = 1, fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: payload.count >> shift))
            }
        }
        return bytes + payload
    }

    static func push(sequence: Int, pad: Int = 4) -> [UInt8] {
        let padding = String(repeating: "x", count: pad)
        let data = #"{"pad":"\#(padding)","seq":\#(sequence),"ts":1,"w":0}"#
        return Array(#"{"t":"d","d":{"a":"d","b":{"p":"/bench/room0","d":\#(data)}}}}"#.utf8)
    }

    /// Five updates: a plain one, one split by the server into a count frame and two pieces (§2.2), one in a
    /// fragmented WebSocket message, one with a 16-bit length, and one more over 16384 bytes in three pieces.
    static let stream: [UInt8] = {
        var bytes = frame(push(sequence: 1))
        let second = push(sequence: 2)
        bytes += frame(Array("2".utf8)) + frame(Array(second[..<20])) + frame(Array(second[20...]))
        let third = push(sequence: 3)
        bytes += frame(Array(third[..<30]), fin: false) + frame(Array(third[30...]), opcode: 0)
        bytes += frame(push(sequence: 4, pad: 300))
        let fifth = push(sequence: 5, pad: 40_000)
        bytes += frame(Array("3".utf8)) + frame(Array(fifth[..<16384])) + frame(Array(fifth[16384..<32768]))
        bytes += frame(Array(fifth[32768...]))
        return bytes
    }()

    private func subscriber() throws -> Worker {
        let options = try LoadOptions(arguments: ["fanout", "--port", "1", "--subscribers", "1", "--messages", "5"])
        let worker = Worker(
            index: 0, options: options, address: try ServerAddress(host: "127.0.0.1", port: 1),
            coordinator: Coordinator())
        worker.connections[1].state = .open
        worker.connections[1].helloSeen = true
        worker.connections[1].ready = true
        worker.latencies = LatencyHistogram()
        worker.measuring = true
        return worker
    }

    private func feed(_ worker: Worker, _ chunks: [ArraySlice<UInt8>]) {
        for chunk in chunks {
            let alive = Array(chunk).withUnsafeBytes { worker.scan(1, $0) }
            #expect(alive)
        }
    }

    private func expectAllCounted(_ worker: Worker) {
        #expect(worker.result.received == 5)
        #expect(worker.result.outOfOrder == 0)
        #expect(worker.result.unexpectedPushes == 0)
        #expect(worker.connections[1].lastSequence == 5)
        #expect(worker.latencies?.total == 5)
    }

    @Test("counts every update of the stream read at once")
    func countsWholeStream() throws {
        let worker = try subscriber()
        feed(worker, [Self.stream[...]])
        expectAllCounted(worker)
    }

    @Test("counts every update of the stream read one byte at a time")
    func countsByteByByte() throws {
        let worker = try subscriber()
        feed(worker, Self.stream.indices.map { Self.stream[$0...$0] })
        expectAllCounted(worker)
    }

    @Test("counts every update whatever the split point between two reads")
    func countsAtEverySplit() throws {
        // The big update makes every split point too slow; split everywhere in the first 700 bytes and at a stride.
        let points = Array(1..<700) + Array(stride(from: 700, to: Self.stream.count, by: 997))
        for point in points {
            let worker = try subscriber()
            feed(worker, [Self.stream[..<point], Self.stream[point...]])
            expectAllCounted(worker)
        }
    }

    @Test("counts a delivery out of order when a sequence number is skipped")
    func flagsGaps() throws {
        let worker = try subscriber()
        feed(worker, [(Self.frame(Self.push(sequence: 1)) + Self.frame(Self.push(sequence: 3)))[...]])
        #expect(worker.result.received == 2)
        #expect(worker.result.outOfOrder == 1)
    }

    @Test("recognizes count frames", arguments: [("2", Int?(2)), ("999999", 999_999), ("0", nil), ("1234567", nil),
        ("12a", nil), ("", nil)])
    func recognizesCountFrames(text: String, count: Int?) {
        Array(text.utf8).withUnsafeBufferPointer { #expect(Worker.pieceCount($0) == count) }
    }
}
