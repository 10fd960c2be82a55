import Testing
import WebSocket

@Suite struct WebSocketConnectionStateMachineTests {
    @Test("a masked single-frame text message is delivered for every split of the input")
    func singleFrameText() {
        expectDripFed(clientFrame(.text, text: "Hello"), produce: [.text("Hello")], machine: { serverMachine() })
    }

    @Test("an empty text message and an empty binary message are delivered")
    func emptyMessages() {
        expectDripFed(
            clientFrame(.text) + clientFrame(.binary), produce: [.text(""), .message(.binary([]))],
            machine: { serverMachine() })
    }

    @Test("16-bit and 64-bit payload lengths are parsed")
    func extendedLengths() {
        let medium = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        let large = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let bytes = clientFrame(.binary, medium) + clientFrame(.binary, large)
        let expected: [Outcome] = [.message(.binary(medium)), .message(.binary(large))]
        // Every split point of 70 KB would be quadratic; check whole, byte by byte and a spread of splits.
        for pieces in [[bytes], bytes.map { [$0] }] + stride(from: 1, to: bytes.count, by: 997).map({
            [Array(bytes[..<$0]), Array(bytes[$0...])]
        }) {
            var machine = serverMachine()
            #expect(feed(&machine, pieces) == expected)
        }
    }

    @Test("fragments are reassembled, with control frames interleaved")
    func fragmentationWithInterleavedControlFrames() {
        let bytes =
            clientFrame(.text, text: "Hel", fin: false) + clientFrame(.ping, Array("p1".utf8))
            + clientFrame(.continuation, text: "l", fin: false) + clientFrame(.pong, Array("unsolicited".utf8))
            + clientFrame(.continuation, text: "o") + clientFrame(.binary, [1, 2], fin: false)
            + clientFrame(.continuation, [3])
        expectDripFed(
            bytes,
            produce: [.send(.server(.pong, Array("p1".utf8))), .text("Hello"), .message(.binary([1, 2, 3]))],
            machine: { serverMachine() })
    }

    @Test("fed a message at a time, an echo of the valid message goes out before the close of a bad frame behind it")
    func answersBeforeFailing() {
        let first = clientFrame(.text, text: "Hello")
        let bytes = first + clientFrame(.ping) + [0x85, 0x80, 0x37, 0xFA, 0x21, 0x3D] + clientFrame(.ping)
        var machine = serverMachine()
        var actions: [WebSocketConnectionStateMachine.Action] = []
        let consumed = bytes.withUnsafeBytes { machine.bytesReceived($0, into: &actions, stoppingAfterMessage: true) }
        #expect(consumed == first.count)
        #expect(actions.map(Outcome.init) == [.text("Hello")])
        // The answer is encoded now, while the machine is still open: the frame is not refused as data after Close.
        let echo = machine.encodeMessage(Array("Hello".utf8), opcode: .text)
        #expect(SentFrame.decode(echo) == .server(.text, Array("Hello".utf8)))
        actions.removeAll()
        let rest = Array(bytes[consumed...])
        let consumedRest = rest.withUnsafeBytes { machine.bytesReceived($0, into: &actions, stoppingAfterMessage: true) }
        #expect(consumedRest == rest.count)
        #expect(actions.map(Outcome.init) == [
            .send(.server(.pong)), .send(.server(.close, closePayload(1002, Array("reserved opcode 5".utf8)))),
            .closeConnection(.failed(.reservedOpcode(5))),
        ])
    }

    @Test("a ping is answered with a pong carrying the same payload")
    func pingPong() {
        let payload = (0..<125).map { UInt8($0) }
        expectDripFed(
            clientFrame(.ping, payload) + clientFrame(.ping), produce: [.send(.server(.pong, payload)), .send(.server(.pong))],
            machine: { serverMachine() })
    }

    @Test("a client masks what it sends and accepts unmasked server frames")
    func clientRole() {
        var client = WebSocketConnectionStateMachine(role: .client)
        let outcomes = feed(
            &client,
            [
                WebSocketFrameEncoder.encode(opcode: .ping, payload: [9]),
                WebSocketFrameEncoder.encode(opcode: .text, payload: Array("hi".utf8)),
            ])
        #expect(
            outcomes == [
                .send(SentFrame(opcode: WebSocketOpcode.pong.rawValue, fin: true, rsv1: false, masked: true, payload: [9])),
                .text("hi"),
            ])
        let message = client.encodeMessage(Array("abc".utf8), opcode: .binary)
        #expect(
            SentFrame.decode(message)
                == SentFrame(opcode: 2, fin: true, rsv1: false, masked: true, payload: Array("abc".utf8)))
    }

    @Test("a server sends unmasked messages")
    func serverEncodes() {
        var server = serverMachine()
        #expect(server.encodeMessage(Array("abc".utf8), opcode: .text) == [0x81, 0x03, 0x61, 0x62, 0x63])
        #expect(server.ping([1]) == [0x89, 0x01, 0x01])
    }

    // MARK: - Frame-level protocol errors (1002)

    @Test("an unmasked client frame fails the connection with 1002")
    func unmaskedClientFrame() {
        expectDripFed(
            WebSocketFrameEncoder.encode(opcode: .text, payload: Array("Hello".utf8)),
            produce: Outcome.failed(.maskingRuleViolated(expectedMasked: true)), machine: { serverMachine() })
    }

    @Test("a masked server frame fails a client with 1002")
    func maskedServerFrame() {
        var client = WebSocketConnectionStateMachine(role: .client)
        let outcomes = feed(&client, [clientFrame(.text, text: "x")])
        #expect(outcomes.count == 2)
        #expect(outcomes.last == .closeConnection(.failed(.maskingRuleViolated(expectedMasked: false))))
        if case .send(let frame?) = outcomes.first {
            #expect(frame.masked)
            #expect(frame.payload.prefix(2) == [0x03, 0xEA])
        } else {
            Issue.record("expected a close frame, got \(outcomes)")
        }
    }

    @Test(
        "reserved bits without an extension fail the connection with 1002",
        arguments: [
            WebSocketFrame(rsv1: true, opcode: .text, maskingKey: testMaskingKey, payload: [0x61]),
            WebSocketFrame(rsv2: true, opcode: .text, maskingKey: testMaskingKey, payload: [0x61]),
            WebSocketFrame(rsv3: true, opcode: .binary, maskingKey: testMaskingKey),
            WebSocketFrame(rsv2: true, opcode: .ping, maskingKey: testMaskingKey),
        ])
    func reservedBits(frame: WebSocketFrame) {
        expectDripFed(
            WebSocketFrameEncoder.encode(frame), produce: Outcome.failed(.reservedBitsSet), machine: { serverMachine() })
    }

    @Test("reserved opcodes fail the connection with 1002", arguments: [3, 4, 5, 6, 7, 11, 12, 13, 14, 15] as [UInt8])
    func reservedOpcodes(opcode: UInt8) {
        let bytes: [UInt8] = [0x80 | opcode, 0x80, 0x37, 0xFA, 0x21, 0x3D]
        expectDripFed(bytes, produce: Outcome.failed(.reservedOpcode(opcode)), machine: { serverMachine() })
    }

    @Test("a control frame longer than 125 bytes fails the connection with 1002")
    func longControlFrame() {
        expectDripFed(
            clientFrame(.ping, [UInt8](repeating: 0, count: 126)),
            produce: Outcome.failed(.controlFrameTooLong(payloadCount: 126)), machine: { serverMachine() })
    }

    @Test("a fragmented control frame fails the connection with 1002")
    func fragmentedControlFrame() {
        expectDripFed(
            clientFrame(.ping, [1], fin: false), produce: Outcome.failed(.fragmentedControlFrame),
            machine: { serverMachine() })
    }

    @Test("a 64-bit length with its top bit set fails the connection with 1002")
    func lengthTopBit() {
        let bytes: [UInt8] = [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 0x37, 0xFA, 0x21, 0x3D]
        expectDripFed(bytes, produce: Outcome.failed(.invalidPayloadLength), machine: { serverMachine() })
    }

    @Test("a continuation without a message in progress fails the connection with 1002")
    func unexpectedContinuation() {
        expectDripFed(
            clientFrame(.continuation, text: "x"), produce: Outcome.failed(.unexpectedContinuation),
            machine: { serverMachine() })
    }

    @Test("a new message inside a fragmented one fails the connection with 1002")
    func expectedContinuation() {
        expectDripFed(
            clientFrame(.text, text: "a", fin: false) + clientFrame(.binary, [1]),
            produce: Outcome.failed(.expectedContinuation), machine: { serverMachine() })
    }

    @Test("after a failure, further input is ignored")
    func inputAfterFailureIgnored() {
        var machine = serverMachine()
        let first = feed(&machine, [clientFrame(.continuation, [1]) + clientFrame(.ping)])
        #expect(first == Outcome.failed(.unexpectedContinuation))
        #expect(machine.state == .closed)
        #expect(feed(&machine, [clientFrame(.ping)]).isEmpty)
        #expect(machine.encodeMessage([1], opcode: .binary).isEmpty)
    }

    // MARK: - Size limits (1009)

    @Test("a frame above maxFrameBytes fails the connection with 1009 as soon as its header arrives")
    func frameTooLarge() {
        let limits = WebSocketLimits(maxFrameBytes: 100, maxMessageBytes: 1000)
        let header = Array(clientFrame(.binary, [UInt8](repeating: 0, count: 101)).prefix(8))
        expectDripFed(header, produce: Outcome.failed(.frameTooLarge(limit: 100)), machine: { serverMachine(limits: limits) })
    }

    @Test("a fragmented message above maxMessageBytes fails the connection with 1009")
    func messageTooLarge() {
        let limits = WebSocketLimits(maxFrameBytes: 100, maxMessageBytes: 150)
        let bytes =
            clientFrame(.binary, [UInt8](repeating: 1, count: 100), fin: false)
            + Array(clientFrame(.continuation, [UInt8](repeating: 1, count: 51)).prefix(6))
        expectDripFed(
            bytes, produce: Outcome.failed(.messageTooLarge(limit: 150)), machine: { serverMachine(limits: limits) })
    }

    @Test("a message of exactly maxMessageBytes is delivered")
    func messageAtLimit() {
        let limits = WebSocketLimits(maxFrameBytes: 100, maxMessageBytes: 150)
        let bytes = clientFrame(.binary, [UInt8](repeating: 1, count: 100), fin: false) + clientFrame(.continuation, [UInt8](repeating: 1, count: 50))
        var machine = serverMachine(limits: limits)
        #expect(feed(&machine, [bytes]) == [.message(.binary([UInt8](repeating: 1, count: 150)))])
    }
}

@Suite struct WebSocketConnectionStateMachineFootprintTests {
    @Test("the state machine's inline size stays small")
    func footprint() {
        // Canopy aims at under 2 KiB of user space per idle WebSocket connection. Between messages the state machine
        // holds no heap buffers (each is released once handed out), so its inline size is its whole share: 112 bytes
        // on 64-bit Linux when this test was written.
        #expect(MemoryLayout<WebSocketConnectionStateMachine>.size <= 128)
    }
}
