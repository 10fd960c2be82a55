import DataModel
import Foundation
import HTTP1
@testable import Gateway
import Primitives
import Testing
import Wire

/// Web-safe base64 of `text`, padded with `.`, as the JS SDK encodes a message.
private func webSafe(_ text: String) -> [UInt8] {
    Array(Base64.encode(Array(text.utf8)).utf8).map { byte in
        switch byte {
        case UInt8(ascii: "+"): UInt8(ascii: "-")
        case UInt8(ascii: "/"): UInt8(ascii: "_")
        case UInt8(ascii: "="): UInt8(ascii: ".")
        default: byte
        }
    }
}

/// `text` cut into segments of `size` characters numbered from `first`.
private func segments(_ text: String, size: Int, first: Int = 0) -> [LongPollSegment] {
    let encoded = webSafe(text)
    let pieces = stride(from: 0, to: encoded.count, by: size).map { Array(encoded[$0..<min($0 + size, encoded.count)]) }
    return pieces.enumerated().map { LongPollSegment(number: first + $0.offset, count: pieces.count, data: $0.element) }
}

@Suite("long-poll requests")
struct LongPollRequestTests {
    @Test("a start keeps the connection parameters and the callback number")
    func start() throws {
        let request = try LongPollRequest.parse(query: "start=t&ser=123&cb=7&v=5&ns=demo&ls=abc&p=1:2:web:3")
        guard case .start(let parameters, let callback) = request.kind else { Issue.record("not a start"); return }
        #expect(callback == "7")
        #expect(parameters.namespace == "demo")
        #expect(parameters.lastSessionID == "abc")
        #expect(parameters.version == "5")
    }

    @Test("a callback that is not a number is refused (it is written into a script)")
    func callbackMustBeDigits() {
        #expect(throws: LongPollRequestError.self) { try LongPollRequest.parse(query: "start=t&cb=1;alert(1)") }
    }

    @Test("a poll's segments come in index order whatever the parameter order")
    func pollSegments() throws {
        let request = try LongPollRequest.parse(query: "id=A&pw=B&ser=9&d1=YQ..&seg1=5&ts1=2&seg0=4&ts0=2&d0=YW")
        guard case .poll(let credentials, let segments) = request.kind else { Issue.record("not a poll"); return }
        #expect(credentials == .init(id: "A", password: "B"))
        #expect(try segments.get().map(\.number) == [4, 5])
    }

    @Test("bad segment fields are refused with the reason, keeping the credentials", arguments: [
        "seg0=x&ts0=1&d0=YQ..", "seg0=1&ts0=0&d0=YQ..", "seg0=1&ts0=20001&d0=YQ..", "seg0=1&d0=YQ..",
        "seg0=99999999999999999&ts0=1&d0=YQ..", "seg1234=1&ts1234=1&d1234=YQ..",
    ])
    func badSegments(fields: String) throws {
        let parsed = Result { try LongPollRequest.parse(query: "id=A&pw=B&" + fields) }
        switch parsed {
        case .success(let request):
            guard case .poll(_, .failure) = request.kind else { Issue.record("accepted \(fields)"); return }
        case .failure(let error):
            #expect(error is LongPollRequestError)
        }
    }

    @Test("a request that is neither a start nor a session's is refused")
    func neither() {
        #expect(throws: LongPollRequestError.self) { try LongPollRequest.parse(query: "ser=1&seg0=0") }
    }
}

@Suite("long-poll segment reassembly")
struct SegmentReassemblerTests {
    private let message = #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/héllo","d":"\#(String(repeating: "x", count: 90))"}}}"#

    @Test("segments in any order, with repeats, give each message once, in segment order")
    func anyOrder() throws {
        var reassembler = SegmentReassembler(maxMessageBytes: 1 << 20)
        let first = segments(message, size: 16)
        let second = segments(#"{"t":"c","d":{"t":"n","d":{}}}"#, size: 8, first: first.count)
        let all = first + second
        var out: [[UInt8]] = []
        out += try reassembler.receive(Array(all[3...].reversed()))
        #expect(out.isEmpty)
        out += try reassembler.receive([all[1], all[0], all[1]])
        #expect(out.isEmpty)
        out += try reassembler.receive([all[2], all[2], all[0]])
        #expect(out.map { String(decoding: $0, as: UTF8.self) } == [message, #"{"t":"c","d":{"t":"n","d":{}}}"#])
        #expect(try reassembler.receive(all).isEmpty)
    }

    @Test("standard base64 and unpadded base64 are accepted too")
    func alphabets() throws {
        var reassembler = SegmentReassembler(maxMessageBytes: 1024)
        let standard = Array(Base64.encode(Array("{}?>".utf8)).utf8)
        let unpadded = Array(webSafe("{}?>").prefix { $0 != UInt8(ascii: ".") })
        let out = try reassembler.receive([
            LongPollSegment(number: 0, count: 1, data: standard), LongPollSegment(number: 1, count: 1, data: unpadded),
        ])
        #expect(out == [Array("{}?>".utf8), Array("{}?>".utf8)])
    }

    @Test("a segment count that contradicts the message's is refused")
    func countMismatch() {
        var reassembler = SegmentReassembler(maxMessageBytes: 1024)
        #expect(throws: LongPollRequestError.self) {
            try reassembler.receive([LongPollSegment(number: 0, count: 2, data: Array("e3".utf8)),
                                     LongPollSegment(number: 1, count: 3, data: Array("0.".utf8))])
        }
    }

    @Test("more segments waiting behind a gap than allowed is refused")
    func tooManyWaiting() {
        var reassembler = SegmentReassembler(maxMessageBytes: 1024)
        let waiting = (1...SegmentReassembler.maxWaitingSegments + 1).map {
            LongPollSegment(number: $0, count: 1, data: Array("e30.".utf8))
        }
        #expect(throws: LongPollRequestError.self) { try reassembler.receive(waiting) }
    }

    @Test("a repeated segment number with other contents is refused")
    func conflictingRepeat() {
        var reassembler = SegmentReassembler(maxMessageBytes: 1024)
        #expect(throws: LongPollRequestError.self) {
            try reassembler.receive([LongPollSegment(number: 3, count: 1, data: Array("e30.".utf8)),
                                     LongPollSegment(number: 3, count: 1, data: Array("W10.".utf8))])
        }
    }

    @Test("a message over the limit and text that is not base64 are refused", arguments: ["!!!!", "e30.e30."])
    func refused(data: String) {
        var reassembler = SegmentReassembler(maxMessageBytes: 1024)
        #expect(throws: LongPollRequestError.self) {
            try reassembler.receive([LongPollSegment(number: 0, count: 1, data: Array(data.utf8))])
        }
        var small = SegmentReassembler(maxMessageBytes: 3)
        #expect(throws: LongPollRequestError.self) { try small.receive(segments("12345678", size: 4)) }
    }
}

@Suite("long-poll channel in memory")
struct LongPollChannelTests {
    private func channel(_ memory: InMemoryGateway, hold: Double = 20) -> LongPollChannel {
        LongPollChannel(id: "I", password: "P", sessionID: "S", loop: memory.loop,
                        settings: LongPollSettings(holdSeconds: hold, idleTimeoutSeconds: 30),
                        directory: memory.gateway.longPolls, metrics: memory.gateway.metrics,
                        maxMessageBytes: 1 << 20, releaseSlot: {})
    }

    private func start(_ memory: InMemoryGateway, _ channel: LongPollChannel) -> RecordedAnswer {
        let answer = RecordedAnswer()
        memory.onLoop {
            let session = WireSession(channel: channel, loop: memory.loop, namespace: memory.namespace,
                                      services: memory.services, host: "test", lastSessionID: nil,
                                      openedByCrossSitePage: false, sessionID: "S")
            channel.start(session, callback: "4", answering: answer)
        }
        return answer
    }

    @Test("the start answer defines the callbacks, starts the session and carries the hello as answer 0")
    func startAnswer() throws {
        let memory = try InMemoryGateway()
        let answer = start(memory, channel(memory))
        #expect(eventually { answer.body != nil })
        let body = try #require(answer.body)
        #expect(body.contains("parent.pLPCommand4(c,a1,a2,a3,a4)"))
        #expect(body.contains("pLPCommand('start','I','P');"))
        #expect(body.contains(#"pRTLPCB(0,[{"t":"c","d":{"t":"h""#))
        #expect(answer.response?.headers["Content-Type"] == "text/javascript; charset=utf-8")
    }

    @Test("requests take effect in segment order whatever order their polls arrive in; a newer poll releases the older")
    func outOfOrderPolls() throws {
        let memory = try InMemoryGateway()
        let channel = channel(memory)
        _ = start(memory, channel)
        let listen = segments(String(decoding: request(1, "q", #"{"p":"/o","h":""}"#), as: UTF8.self), size: 40)
        let write = segments(String(decoding: request(2, "p", #"{"p":"/o","d":"first"}"#), as: UTF8.self), size: 40,
                             first: listen.count)
        let later = RecordedAnswer()
        let earlier = RecordedAnswer()
        memory.onLoop {
            channel.poll(.success(write), answer: later)
            channel.poll(.success(listen), answer: earlier)
        }
        // The later-sent write arrived first and waited; the older poll was answered (empty) when the newer came.
        #expect(later.body == "")
        #expect(eventually { earlier.body != nil })
        // Poll on until the write's answer came; answers are numbered on from 1.
        var body = try #require(earlier.body)
        var number = 1
        while !body.contains(#""r":2"#) {
            let next = RecordedAnswer()
            memory.onLoop { channel.poll(.success([]), answer: next) }
            #expect(eventually { next.body?.isEmpty == false })
            number += 1
            let text = try #require(next.body)
            #expect(text.hasPrefix("pRTLPCB(\(number),["))
            body += text
        }
        #expect(body.hasPrefix("pRTLPCB(1,["))
        let listenOK = try #require(body.range(of: #"{"t":"d","d":{"r":1"#))
        let push = try #require(body.range(of: #""first""#))
        let writeOK = try #require(body.range(of: #"{"t":"d","d":{"r":2"#))
        #expect(listenOK.lowerBound < push.lowerBound && push.lowerBound < writeOK.lowerBound)
    }

    @Test("a held poll is answered empty after the hold time")
    func holdTimeout() throws {
        let memory = try InMemoryGateway()
        let channel = channel(memory, hold: 0.05)
        _ = start(memory, channel)
        let poll = RecordedAnswer()
        memory.onLoop { channel.poll(.success([]), answer: poll) }
        #expect(eventually { poll.body == "" })
    }

    @Test("a request arriving as an ending session's last poll leaves is answered at once, never held")
    func requestAfterTheEnd() throws {
        let memory = try InMemoryGateway()
        let channel = channel(memory)
        let started = start(memory, channel)
        #expect(eventually { started.body != nil })
        let held = RecordedAnswer()
        let hostile = RecordedAnswer()
        let late = RecordedAnswer()
        memory.onLoop {
            channel.poll(.success([]), answer: held)
            channel.poll(.success([LongPollSegment(number: 0, count: 1, data: Array("!!!!".utf8))]), answer: hostile)
            // The held poll carries the error and the close command; this one comes after it.
            channel.poll(.success([]), answer: late)
        }
        #expect(held.body?.contains("pLPCommand('close',") == true)
        #expect(late.response?.status.code == 404)
    }

    @Test("a hostile segment gets 400 and ends the session: its held poll gets the error and the close command")
    func hostileSegment() throws {
        let memory = try InMemoryGateway()
        let channel = channel(memory)
        let started = start(memory, channel)
        #expect(eventually { started.body != nil })
        let held = RecordedAnswer()
        let hostile = RecordedAnswer()
        memory.onLoop {
            channel.poll(.success([]), answer: held)
            channel.poll(.success([LongPollSegment(number: 0, count: 1, data: Array("!!!!".utf8))]), answer: hostile)
        }
        #expect(hostile.response?.status.code == 400)
        #expect(eventually { held.body?.contains("pLPCommand('close',") == true })
        #expect(held.body?.contains(#""t":"e""#) == true)
        #expect(channel.isClosed)
    }
}
