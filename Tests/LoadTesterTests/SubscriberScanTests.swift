import Testing
import WebSocket
import WebSocketDeflate

@testable import LoadTester

/// One unmasked server frame (RFC 6455 §5.2); `opcode` 0 continues a fragmented message, `rsv1` marks it
/// compressed.
func serverFrame(_ payload: [UInt8], opcode: UInt8 = 1, fin: Bool = true, rsv1: Bool = false) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode]
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

/// A worker of a one-subscriber run whose subscriber (local connection 1) is open and ready, so that server bytes
/// can be fed to its scanner with no socket involved (nothing here makes the subscriber send).
func readySubscriber(_ change: (inout BenchConfiguration) -> Void = { _ in }) throws -> Worker {
    var configuration = BenchConfiguration(scenario: .fanout)
    configuration.url = "ws://127.0.0.1:1"
    configuration.subscribers = 1
    configuration.messages = 5
    change(&configuration)
    let server = try configuration.serverURL
    let worker = Worker(
        index: 0, count: 1, configuration: configuration, plan: RunPlan(configuration), server: server,
        addresses: [try ServerAddress(host: "127.0.0.1", port: 1)], tlsContext: nil,
        coordinator: Coordinator(clockOrigin: 0))
    worker.connections[1].state = .open
    worker.connections[1].helloSeen = true
    worker.connections[1].ready = true
    worker.measuring = true
    return worker
}

/// Feeds `chunks` to connection 1 of `worker`, expecting it to stay alive.
func feed(_ worker: Worker, _ chunks: [ArraySlice<UInt8>]) {
    for chunk in chunks {
        let alive = Array(chunk).withUnsafeBytes { worker.scan(1, $0) }
        #expect(alive)
    }
}

/// The chunkings every drip-feed test uses: whole, one byte at a time, and split once at every point (or, for long
/// streams, the first 700 points and then every 997th).
func chunkings(_ stream: [UInt8]) -> [[ArraySlice<UInt8>]] {
    let points = stream.count <= 700 ? Array(1..<stream.count)
        : Array(1..<700) + Array(stride(from: 700, to: stream.count, by: 997))
    return [[stream[...]], stream.indices.map { stream[$0...$0] }] + points.map { [stream[..<$0], stream[$0...]] }
}

@Suite("Subscriber frame scanning")
struct SubscriberScanTests {
    static func push(sequence: Int, pad: Int = 4) -> [UInt8] {
        let padding = String(repeating: "x", count: pad)
        let data = #"{"pad":"\#(padding)","seq":\#(sequence),"ts":1,"w":0}"#
        return Array(#"{"t":"d","d":{"a":"d","b":{"p":"/bench/room0","d":\#(data)}}}"#.utf8)
    }

    /// Five updates: a plain one, one split by the server into a count frame and two pieces (§2.2), one in a
    /// fragmented WebSocket message, one with a 16-bit length, and one more over 16384 bytes in three pieces.
    static let stream: [UInt8] = {
        var bytes = serverFrame(push(sequence: 1))
        let second = push(sequence: 2)
        bytes += serverFrame(Array("2".utf8)) + serverFrame(Array(second[..<20])) + serverFrame(Array(second[20...]))
        let third = push(sequence: 3)
        bytes += serverFrame(Array(third[..<30]), fin: false) + serverFrame(Array(third[30...]), opcode: 0)
        bytes += serverFrame(push(sequence: 4, pad: 300))
        let fifth = push(sequence: 5, pad: 40_000)
        bytes += serverFrame(Array("3".utf8)) + serverFrame(Array(fifth[..<16384]))
            + serverFrame(Array(fifth[16384..<32768])) + serverFrame(Array(fifth[32768...]))
        return bytes
    }()

    private func expectAllCounted(_ worker: Worker, count: Int = 5) {
        #expect(worker.result.received == count)
        #expect(worker.result.outOfOrder == 0)
        #expect(worker.result.unexpectedPushes == 0)
        #expect(worker.connections[1].lastSequence == Int64(count))
        #expect(worker.interval.latency.count == UInt64(count))
        #expect(worker.interval.deliveries == count)
    }

    @Test("counts every update whole, byte by byte and at every split point")
    func countsEveryChunking() throws {
        for chunks in chunkings(Self.stream) {
            let worker = try readySubscriber()
            feed(worker, chunks)
            expectAllCounted(worker)
        }
    }

    @Test("inflates compressed updates (RSV1, permessage-deflate) at every split point")
    func inflatesCompressedUpdates() throws {
        var stream: [UInt8] = []
        for sequence in 1...3 {
            let push = Self.push(sequence: sequence, pad: 200)
            let compressed = try #require(push.withUnsafeBytes { PerMessageDeflate.compressOnce($0) })
            if sequence == 2 {
                stream += serverFrame(Array(compressed[..<5]), fin: false, rsv1: true)
                    + serverFrame(Array(compressed[5...]), opcode: 0)
            } else {
                stream += serverFrame(compressed, rsv1: true)
            }
        }
        for chunks in chunkings(stream) {
            let worker = try readySubscriber()
            worker.connections[1].deflate = PerMessageDeflateCodec(
                role: .client, parameters: PerMessageDeflateParameters())
            feed(worker, chunks)
            expectAllCounted(worker, count: 3)
        }
    }

    @Test("drops a connection that sends RSV1 without permessage-deflate")
    func refusesUnnegotiatedCompression() throws {
        let worker = try readySubscriber()
        let alive = serverFrame(Self.push(sequence: 1), rsv1: true).withUnsafeBytes { worker.scan(1, $0) }
        #expect(!alive)
        #expect(worker.connections[1].state == .closed)
    }

    @Test("counts a delivery out of order when a sequence number is skipped")
    func flagsGaps() throws {
        let worker = try readySubscriber()
        feed(worker, [(serverFrame(Self.push(sequence: 1)) + serverFrame(Self.push(sequence: 3)))[...]])
        #expect(worker.result.received == 2)
        #expect(worker.result.outOfOrder == 1)
    }

    @Test("counts query window merges: entering children delivered, leaving ones evicted")
    func countsWindowMerges() throws {
        let worker = try readySubscriber { $0.scenario = .query }
        let merge = #"{"t":"d","d":{"a":"m","b":{"p":"/bench/feed","d":{"p0":null,"w0s1":"#
            + #"{"pad":"x","seq":1,"ts":5,"w":0}},"t":1}}}"#
        let child = #"{"t":"d","d":{"a":"d","b":{"p":"/bench/feed/w0s2","d":{"pad":"x","seq":2,"ts":6,"w":0},"t":1}}}"#
        let elsewhere = #"{"t":"d","d":{"a":"d","b":{"p":"/bench/feedback","d":{"pad":"x","seq":3,"ts":6,"w":0}}}}"#
        let stream = [merge, child, elsewhere].flatMap { serverFrame(Array($0.utf8)) }
        feed(worker, [stream[...]])
        #expect(worker.result.received == 2)
        #expect(worker.result.evictions == 1)
        #expect(worker.result.unexpectedPushes == 1)
        #expect(worker.result.outOfOrder == 0)
    }

    @Test("drops the connection on a close frame and keeps its code")
    func handlesControlFrames() throws {
        let worker = try readySubscriber()
        let close = serverFrame([0x03, 0xE9], opcode: 8)
        let alive = close.withUnsafeBytes { worker.scan(1, $0) }
        #expect(!alive)
        #expect(worker.result.errors.first?.contains("1001") == true)
    }

    @Test("recognizes count frames", arguments: [
        ("2", Int?(2)), ("999999", 999_999), ("0", nil), ("1234567", nil), ("12a", nil), ("", nil),
    ])
    func recognizesCountFrames(text: String, count: Int?) {
        Array(text.utf8).withUnsafeBufferPointer { #expect(Worker.pieceCount($0) == count) }
    }
}
