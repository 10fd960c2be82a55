import Testing
import WebSocket

@Suite struct WebSocketCloseHandshakeTests {
    @Test("a close without a code is answered with an empty close, then the connection closes")
    func emptyClose() {
        expectDripFed(
            clientFrame(.close),
            produce: [
                .send(.server(.close)),
                .closeConnection(.handshakeCompleted(peerCode: nil, peerReason: "", initiatedLocally: false)),
            ], machine: { serverMachine() })
    }

    @Test(
        "a close with an allowed code is echoed",
        arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999]
            as [UInt16])
    func allowedCodes(code: UInt16) {
        expectDripFed(
            clientFrame(.close, closePayload(code, Array("bye".utf8))),
            produce: [
                .send(.server(.close, closePayload(code))),
                .closeConnection(
                    .handshakeCompleted(
                        peerCode: WebSocketCloseCode(rawValue: code), peerReason: "bye", initiatedLocally: false)),
            ], machine: { serverMachine() })
    }

    @Test(
        "a close with a code that may not be sent fails the connection with 1002",
        arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as [UInt16])
    func invalidCodes(code: UInt16) {
        expectDripFed(
            clientFrame(.close, closePayload(code)), produce: Outcome.failed(.invalidCloseCode(code)),
            machine: { serverMachine() })
    }

    @Test("a one-byte close payload fails the connection with 1002")
    func oneByteClose() {
        expectDripFed(clientFrame(.close, [0x03]), produce: Outcome.failed(.closePayloadTooShort), machine: { serverMachine() })
    }

    @Test("a close reason that is not UTF-8 fails the connection with 1007")
    func invalidReason() {
        expectDripFed(
            clientFrame(.close, closePayload(1000, [0x61, 0xFF])), produce: Outcome.failed(.invalidUTF8InCloseReason),
            machine: { serverMachine() })
    }

    @Test("a close in the middle of a fragmented message is answered")
    func closeInsideFragmentedMessage() {
        expectDripFed(
            clientFrame(.text, text: "part", fin: false) + clientFrame(.close, closePayload(1000)),
            produce: [
                .send(.server(.close, closePayload(1000))),
                .closeConnection(.handshakeCompleted(peerCode: 1000, peerReason: "", initiatedLocally: false)),
            ], machine: { serverMachine() })
    }

    @Test("after this side sends close, data and pings are ignored until the peer's close completes the handshake")
    func locallyInitiatedClose() {
        var machine = serverMachine()
        // A fragmented message is in progress when the server starts closing.
        #expect(feed(&machine, [clientFrame(.text, text: "a", fin: false)]).isEmpty)
        let closeFrame = machine.close(code: .goingAway, reason: "shutting down")
        #expect(SentFrame.decode(closeFrame) == .server(.close, closePayload(1001, Array("shutting down".utf8))))
        #expect(machine.state == .closing)
        #expect(machine.close(code: .normalClosure).isEmpty)
        #expect(machine.encodeMessage([1], opcode: .binary).isEmpty)
        #expect(machine.ping().isEmpty)

        let outcomes = feed(
            &machine,
            [
                clientFrame(.continuation, text: "b"), clientFrame(.text, text: "ignored"), clientFrame(.ping),
                clientFrame(.close, closePayload(1000)),
            ])
        #expect(outcomes == [.closeConnection(.handshakeCompleted(peerCode: 1000, peerReason: "", initiatedLocally: true))])
        #expect(machine.state == .closed)
        #expect(feed(&machine, [clientFrame(.text, text: "late")]).isEmpty)
    }

    @Test("closing in the middle of a frame discards the rest of that frame")
    func closeMidFrame() {
        var machine = serverMachine()
        let frame = clientFrame(.text, [0x61, 0x62] + [0xFF, 0xFF])  // the invalid tail would fail an open connection
        #expect(feed(&machine, [Array(frame.prefix(8))]).isEmpty)
        _ = machine.close(code: .goingAway)
        let outcomes = feed(&machine, [Array(frame.dropFirst(8)) + clientFrame(.close)])
        #expect(outcomes == [.closeConnection(.handshakeCompleted(peerCode: nil, peerReason: "", initiatedLocally: true))])
    }

    @Test("a protocol error while closing closes the connection without a second close frame")
    func errorWhileClosing() {
        var machine = serverMachine()
        _ = machine.close(code: .normalClosure)
        let outcomes = feed(&machine, [clientFrame(.close, [0x03])])
        #expect(outcomes == [.closeConnection(.failed(.closePayloadTooShort))])
    }

    @Test("a long close reason is cut at a character boundary to fit 123 bytes")
    func reasonTruncated() {
        var machine = serverMachine()
        let reason = String(repeating: "a", count: 121) + "é" + "é"  // 121 + 2 + 2 bytes
        let frame = machine.close(code: .policyViolation, reason: reason)
        let decoded = SentFrame.decode(frame)
        #expect(decoded?.payload.count == 125)
        #expect(decoded?.payload.suffix(2) == [0xC3, 0xA9])
        let reasonOfEmojis = String(repeating: "😀", count: 31)  // 124 bytes: only 30 fit
        var other = serverMachine()
        #expect(SentFrame.decode(other.close(code: 1000, reason: reasonOfEmojis))?.payload.count == 2 + 120)
    }

    @Test("every failure maps to its close code", arguments: [
        (WebSocketProtocolError.reservedBitsSet, 1002), (.reservedOpcode(3), 1002),
        (.maskingRuleViolated(expectedMasked: true), 1002), (.fragmentedControlFrame, 1002),
        (.controlFrameTooLong(payloadCount: 126), 1002), (.invalidPayloadLength, 1002), (.unexpectedContinuation, 1002),
        (.expectedContinuation, 1002), (.closePayloadTooShort, 1002), (.invalidCloseCode(5), 1002),
        (.invalidUTF8InCloseReason, 1007), (.invalidUTF8InTextMessage, 1007), (.invalidCompressedData, 1007),
        (.frameTooLarge(limit: 1), 1009), (.messageTooLarge(limit: 1), 1009), (.extensionFailure("x"), 1011),
    ] as [(WebSocketProtocolError, UInt16)])
    func closeCodes(error: WebSocketProtocolError, code: UInt16) {
        #expect(error.closeCode.rawValue == code)
        #expect(error.closeReason.utf8.count <= 123)
    }
}

@Suite struct WebSocketTextValidationTests {
    @Test("invalid UTF-8 in a single-frame text message fails the connection with 1007")
    func invalidSingleFrame() {
        expectDripFed(
            clientFrame(.text, [0x48, 0xC0, 0x80]), produce: Outcome.failed(.invalidUTF8InTextMessage),
            machine: { serverMachine() })
    }

    @Test("an invalid byte in the first fragment fails at once, before the rest of the message arrives")
    func failsFastOnFirstFragment() {
        // Only the first fragment is fed; the message is far from complete.
        expectDripFed(
            clientFrame(.text, [0x61, 0xFF, 0x62], fin: false), produce: Outcome.failed(.invalidUTF8InTextMessage),
            machine: { serverMachine() })
    }

    @Test("a fragment ending in a sequence that can no longer be valid fails at once")
    func failsOnKnownInvalidPartialSequence() {
        // F4 90 can only continue to a code point above U+10FFFF.
        expectDripFed(
            clientFrame(.text, [0x61, 0xF4, 0x90], fin: false), produce: Outcome.failed(.invalidUTF8InTextMessage),
            machine: { serverMachine() })
    }

    @Test("an invalid byte in the middle of a frame fails before the frame's remaining payload arrives")
    func failsMidFrame() {
        let frame = clientFrame(.text, Array("valid".utf8) + [0xED, 0xA0, 0x80] + Array("the rest".utf8))
        // Header (6 bytes) plus the payload up to the surrogate's second byte.
        expectDripFed(
            Array(frame.prefix(6 + 7)), produce: Outcome.failed(.invalidUTF8InTextMessage), machine: { serverMachine() })
    }

    @Test("a multi-byte character split across fragments is accepted")
    func characterAcrossFragments() {
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        expectDripFed(
            clientFrame(.text, [0x61, euro[0]], fin: false) + clientFrame(.continuation, [euro[1]], fin: false)
                + clientFrame(.continuation, [euro[2]]),
            produce: [.text("a€")], machine: { serverMachine() })
    }

    @Test("a message ending inside a character fails the connection with 1007")
    func truncatedAtEnd() {
        expectDripFed(
            clientFrame(.text, [0x61, 0xE2, 0x82], fin: false) + clientFrame(.continuation, []),
            produce: Outcome.failed(.invalidUTF8InTextMessage), machine: { serverMachine() })
    }

    @Test("binary messages are not validated")
    func binaryNotValidated() {
        expectDripFed(clientFrame(.binary, [0xFF, 0xC0]), produce: [.message(.binary([0xFF, 0xC0]))], machine: { serverMachine() })
    }

    @Test("validation restarts with each message")
    func validatorResetsBetweenMessages() {
        expectDripFed(
            clientFrame(.text, text: "é") + clientFrame(.text, text: "ü"), produce: [.text("é"), .text("ü")],
            machine: { serverMachine() })
    }
}
