import Testing

@testable import LoadTester

@Suite("MQTTPacket")
struct MQTTPacketTests {
    @Test("builds CONNECT, SUBSCRIBE and PUBLISH as MQTT 3.1.1 lays them out")
    func buildsPackets() {
        var connect: [UInt8] = []
        MQTTPacket.appendConnect(clientID: Array("c1".utf8), to: &connect)
        #expect(connect == [0x10, 14, 0, 4, 0x4D, 0x51, 0x54, 0x54, 4, 0x02, 0, 0, 0, 2, 0x63, 0x31])
        var subscribe: [UInt8] = []
        MQTTPacket.appendSubscribe(topic: Array("a/b".utf8), to: &subscribe)
        #expect(subscribe == [0x82, 8, 0, 1, 0, 3, 0x61, 0x2F, 0x62, 0])
        var publish: [UInt8] = []
        MQTTPacket.appendPublishHeader(topic: Array("t".utf8), payloadBytes: 200, to: &publish)
        #expect(publish == [0x30, 0xCB, 0x01, 0, 1, 0x74])
    }

    @Test("encodes remaining lengths in one to four bytes", arguments: [
        (0, [UInt8(0)]), (127, [0x7F]), (128, [0x80, 0x01]), (16383, [0xFF, 0x7F]), (16384, [0x80, 0x80, 0x01]),
        (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
    ])
    func encodesRemainingLength(value: Int, bytes: [UInt8]) {
        var encoded: [UInt8] = []
        MQTTPacket.appendRemainingLength(value, to: &encoded)
        #expect(encoded == bytes)
    }

    @Test("finds whole packets, waits for cut ones and refuses overlong lengths")
    func scansPackets() {
        let packets: [UInt8] = [0x20, 2, 0, 0, 0x90, 3, 0, 1, 0, 0x30]
        packets.withUnsafeBufferPointer { bytes in
            #expect(MQTTPacket.next(in: bytes, from: 0) == .packet(.init(type: 2, flags: 0, body: 2..<4, end: 4)))
            #expect(MQTTPacket.next(in: bytes, from: 4) == .packet(.init(type: 9, flags: 0, body: 6..<9, end: 9)))
            #expect(MQTTPacket.next(in: bytes, from: 9) == .incomplete)
        }
        [UInt8]([0x30, 0x80, 0x80, 0x80, 0x80, 0x01]).withUnsafeBufferPointer {
            #expect(MQTTPacket.next(in: $0, from: 0) == .malformed)
        }
        [UInt8]([0x30, 0x80, 0x80]).withUnsafeBufferPointer { #expect(MQTTPacket.next(in: $0, from: 0) == .incomplete) }
    }

    @Test("finds the payload of QoS 0 and QoS 1 publishes")
    func findsPublishPayload() {
        let qos0: [UInt8] = [0x30, 6, 0, 1, 0x74, 0x61, 0x62, 0x63]
        qos0.withUnsafeBufferPointer { bytes in
            guard case .packet(let packet) = MQTTPacket.next(in: bytes, from: 0) else {
                Issue.record("no packet")
                return
            }
            #expect(MQTTPacket.publishPayload(bytes, packet) == 5..<8)
        }
        let qos1: [UInt8] = [0x32, 6, 0, 1, 0x74, 0, 7, 0x61]
        qos1.withUnsafeBufferPointer { bytes in
            guard case .packet(let packet) = MQTTPacket.next(in: bytes, from: 0) else {
                Issue.record("no packet")
                return
            }
            #expect(MQTTPacket.publishPayload(bytes, packet) == 7..<8)
        }
    }
}

@Suite("MQTT subscriber scanning")
struct MQTTSubscriberTests {
    static func publish(sequence: Int) -> [UInt8] {
        let payload = Array(#"{"pad":"xxxx","seq":\#(sequence),"ts":1,"w":0}"#.utf8)
        var packet: [UInt8] = []
        MQTTPacket.appendPublishHeader(topic: Array("bench/room0".utf8), payloadBytes: payload.count, to: &packet)
        return packet + payload
    }

    /// Four publishes: one per message, two in one message, and one cut across two messages.
    static let stream: [UInt8] = {
        let third = publish(sequence: 4)
        return serverFrame(publish(sequence: 1), opcode: 2)
            + serverFrame(publish(sequence: 2) + publish(sequence: 3), opcode: 2)
            + serverFrame(Array(third[..<7]), opcode: 2) + serverFrame(Array(third[7...]), opcode: 2)
    }()

    @Test("counts every publish whole, byte by byte and at every split point")
    func countsEveryChunking() throws {
        for chunks in chunkings(Self.stream) {
            let worker = try readySubscriber { $0.wireProtocol = .mqtt }
            feed(worker, chunks)
            #expect(worker.result.received == 4)
            #expect(worker.result.outOfOrder == 0)
            #expect(worker.result.unexpectedPushes == 0)
            #expect(worker.connections[1].streamPending.isEmpty)
        }
    }
}
