import CoreMetrics
import HTTP1
import HTTPServer
import Primitives
import Transport
import WebSocket
import Wire

/// A wire session carried by long polling (long-polling.md): the client's messages arrive as segments on requests,
/// and the session's messages wait in an outbox for the request the server holds. Everything here belongs to
/// ``loop``, the session's loop; requests arriving on other connections hop here.
final class LongPollChannel: WireChannel, @unchecked Sendable {
    /// The long-poll session id and password (§2); every request must carry both.
    let id: String
    let password: String
    /// The hello's session id, which the WebSocket upgrade presents (§7).
    let sessionID: String
    let loop: EventLoop
    private let settings: LongPollSettings
    private let directory: LongPollDirectory
    private let metrics: GatewayMetrics
    /// Gives the session's place among the server's connections back, once.
    private var releaseSlot: (() -> Void)?

    private enum State {
        /// The session travels here.
        case open
        /// The session ended or moved to a WebSocket: what waits in the outbox still goes out, then the close
        /// command (§5).
        case ending
        /// Nothing more: requests get 404.
        case ended
    }

    private var state = State.open
    /// The session, until it ends or moves to a WebSocket.
    private var session: WireSession?
    /// The WebSocket that is taking the session over, until the switch (§7).
    private var secondary: UpgradedWebSocketChannel?
    /// The start answer's preamble, until the start request is answered (§2).
    private var startPreamble: [UInt8]?
    /// The request held for the next answer (§4), since when (monotonic nanoseconds), and whether a timer is set to
    /// check its hold time (one at a time per channel, however many polls come and go).
    private var held: (any PollAnswer)?
    private var heldSince: UInt64 = 0
    private var holdCheckScheduled = false
    private var answerScheduled = false
    /// Messages waiting for a poll, from `outboxStart` on.
    private var outbox: [[UInt8]] = []
    private var outboxStart = 0
    private var outboxBytes = 0
    /// The number of the next answer with messages (§4).
    private var nextAnswer = 0
    private var reassembler: SegmentReassembler
    /// Puts shared pushes' frames back into messages.
    private var pushAssembler = FrameAssembler()
    /// Messages the client sent while reading is paused.
    private var paused = false
    private var unread: [[UInt8]] = []
    /// When the last request arrived (monotonic nanoseconds).
    private var lastRequest = MonotonicClock.nowNanoseconds()
    /// Segment bytes a second (`nil`: unlimited), and since when requests have waited for it without pause.
    private var inboundBucket: TokenBucket?
    private var throttledSince: UInt64?

    /// Most bytes of messages in one answer (more wait for the next poll).
    static let maxAnswerBytes = 256 * 1024
    /// Largest message the protocol can send: what a WebSocket could carry in its most frames (§4).
    static let maxMessageBytes = FrameSplitter.maxFrameCount * FrameSplitter.maxFrameUnits

    init(id: String, password: String, sessionID: String, loop: EventLoop, settings: LongPollSettings,
         directory: LongPollDirectory, metrics: GatewayMetrics, maxMessageBytes: Int, releaseSlot: @escaping () -> Void)
    {
        self.id = id
        self.password = password
        self.sessionID = sessionID
        self.loop = loop
        self.settings = settings
        self.directory = directory
        self.metrics = metrics
        self.releaseSlot = releaseSlot
        reassembler = SegmentReassembler(maxMessageBytes: maxMessageBytes)
        if settings.inboundBytesPerSecond > 0 {
            inboundBucket = TokenBucket(rate: Double(settings.inboundBytesPerSecond),
                                        burst: Double(max(settings.inboundBurstBytes, 2_048)))
        }
    }

    // MARK: - Requests (on the loop)

    /// Starts `session` on this channel; `start` is answered with the preamble and the hello (§2).
    func start(_ session: WireSession, callback: String?, answering start: any PollAnswer) {
        self.session = session
        startPreamble = LongPollScript.startPreamble(callback: callback, id: id, password: password)
        held = start
        directory.add(self)
        session.open()
        scheduleExpiryCheck(after: settings.idleTimeoutSeconds)
    }

    /// A poll, with the segments it carries (§3, §4).
    func poll(_ segments: Result<[LongPollSegment], LongPollRequestError>, answer: any PollAnswer) {
        lastRequest = MonotonicClock.nowNanoseconds()
        guard state != .ended else { return answer.respond(LongPollDirectory.unknownSession) }
        let messages: [[UInt8]]
        do {
            let segments = try segments.get()
            guard admit(segments, answer: answer) else { return }
            messages = state == .open ? try reassembler.receive(segments) : []
        } catch {
            answer.respond(LongPollScript.refusal(.badRequest, error.description))
            return fail(error.description)
        }
        hold(answer)
        for message in messages { take(message) }
    }

    /// `disconn=t`: the page is leaving; a session that moved to a WebSocket stays (§6).
    func clientLeft() {
        guard state == .open else { return finish() }
        end()
        finish()
    }

    /// The server is stopping: the session ends now.
    func serverStopping() {
        guard state != .ended else { return }
        if state == .open { end() }
        if held != nil { answerHeld() }
        finish()
    }

    /// Whether the segments may be taken now under the inbound rate; when not, the request waits and is taken
    /// again later, and a session throttled for too long is ended (as a WebSocket is closed, 1008).
    private func admit(_ segments: [LongPollSegment], answer: any PollAnswer) -> Bool {
        guard var bucket = inboundBucket, !segments.isEmpty else { return true }
        let bytes = segments.reduce(0) { $0 + $1.data.count }
        let now = MonotonicClock.nowNanoseconds()
        let wait = bucket.take(Double(bytes), now: now)
        inboundBucket = bucket
        guard let wait else {
            throttledSince = nil
            return true
        }
        let since = throttledSince ?? now
        throttledSince = since
        if Double(now - since) / 1e9 > settings.inboundThrottleSeconds {
            answer.respond(LongPollScript.refusal(.tooManyRequests, "inbound rate limit exceeded"))
            fail("inbound rate limit exceeded")
            return false
        }
        loop.execute(after: wait) { [self] in poll(.success(segments), answer: answer) }
        return false
    }

    /// Hands one of the client's messages on, or switches to the WebSocket at the long poll's last message (§7).
    private func take(_ message: [UInt8]) {
        guard state == .open else { return }
        if secondary != nil, UpgradeControl.isEndOfTransmission(message) { return switchToSecondary() }
        if paused {
            unread.append(message)
        } else {
            session?.receive(message)
        }
    }

    // MARK: - Answers

    /// Holds `answer` for the next answer; the request held before it is answered first (§4).
    private func hold(_ answer: any PollAnswer) {
        if held != nil { answerHeld() }
        // Answering the older request may have delivered an ending session's close command: nothing is left to hold.
        guard state != .ended else { return answer.respond(LongPollDirectory.unknownSession) }
        held = answer
        heldSince = MonotonicClock.nowNanoseconds()
        scheduleHoldCheck(after: settings.holdSeconds)
        scheduleAnswer()
    }

    /// Answers the held request empty once it was held for the hold time; one timer at a time, which moves on to
    /// the deadline of whichever request is held when it fires.
    private func scheduleHoldCheck(after seconds: Double) {
        guard !holdCheckScheduled else { return }
        holdCheckScheduled = true
        loop.execute(after: seconds) { [weak self] in
            guard let self else { return }
            holdCheckScheduled = false
            guard held != nil, state != .ended else { return }
            let heldFor = Double(MonotonicClock.nowNanoseconds() - heldSince) / 1e9
            if heldFor >= settings.holdSeconds * 0.999 {
                answerHeld()
            } else {
                scheduleHoldCheck(after: settings.holdSeconds - heldFor)
            }
        }
    }

    /// Answers the held request at the end of this loop pass, when there is something to say.
    private func scheduleAnswer() {
        guard held != nil, !answerScheduled, outboxStart < outbox.count || state == .ending else { return }
        answerScheduled = true
        loop.runAtEndOfPass { [self] in
            answerScheduled = false
            if held != nil, outboxStart < outbox.count || state == .ending { answerHeld() }
        }
    }

    /// Answers the held request with what waits (up to ``maxAnswerBytes``), and the close command once an ending
    /// session's outbox is empty.
    private func answerHeld() {
        guard let answer = held else { return }
        held = nil
        var script = startPreamble ?? []
        startPreamble = nil
        if outboxStart < outbox.count {
            var end = outboxStart
            var bytes = 0
            while end < outbox.count, end == outboxStart || bytes + outbox[end].count <= Self.maxAnswerBytes {
                bytes += outbox[end].count
                end += 1
            }
            LongPollScript.appendMessages(outbox[outboxStart..<end], number: nextAnswer, to: &script)
            nextAnswer += 1
            outboxBytes -= bytes
            outboxStart = end
            if outboxStart == outbox.count {
                outbox.removeAll(keepingCapacity: outbox.count <= 64)
                outboxStart = 0
            } else if outboxStart > 1_024 {
                outbox.removeFirst(outboxStart)
                outboxStart = 0
            }
        }
        let finished = state == .ending && outboxStart == outbox.count
        if finished { script += LongPollScript.closeCommand(lastNumber: nextAnswer - 1) }
        answer.respond(LongPollScript.response(script))
        if finished {
            finish()
        } else if outboxStart == outbox.count {
            session?.drained()
        }
    }

    // MARK: - Ending

    /// Ends the session on an error: the client gets the reason (`e`) and the close command (§3, §5).
    private func fail(_ reason: String) {
        guard state == .open else { return }
        metrics.protocolErrors.increment()
        _ = send(message: ServerMessage.error(reason).encoded())
        end()
    }

    /// The session is over: it ends (its onDisconnect writes run) and the outbox drains to the page.
    private func end() {
        guard state == .open else { return }
        state = .ending
        secondary?.abandon()
        secondary = nil
        if let session {
            self.session = nil
            loop.execute { session.closed() }
        }
        scheduleAnswer()
    }

    /// Nothing more goes to the page: the channel leaves the directory and its connection place is given back.
    private func finish() {
        guard state != .ended else { return }
        state = .ended
        outbox.removeAll()
        outboxStart = 0
        outboxBytes = 0
        unread.removeAll()
        if let answer = held {
            held = nil
            answer.respond(LongPollScript.response(LongPollScript.closeCommand(lastNumber: nextAnswer - 1)))
        }
        directory.remove(self)
        releaseSlot?()
        releaseSlot = nil
    }

    private func scheduleExpiryCheck(after seconds: Double) {
        loop.execute(after: seconds) { [weak self] in self?.checkExpiry() }
    }

    /// Ends a session whose page stopped polling (§5); an ending one is finished the same way.
    private func checkExpiry() {
        guard state != .ended else { return }
        let idle = Double(MonotonicClock.nowNanoseconds() - lastRequest) / 1e9
        guard idle >= settings.idleTimeoutSeconds else {
            return scheduleExpiryCheck(after: settings.idleTimeoutSeconds - idle)
        }
        if state == .open { metrics.longPollExpired.increment() }
        end()
        finish()
    }

    // MARK: - The upgrade (§7)

    /// A WebSocket presented this session's id: it takes the session over once the long poll's `n` arrives.
    func offerSecondary(_ channel: UpgradedWebSocketChannel) {
        guard state == .open, secondary == nil else { return channel.refuse() }
        secondary = channel
    }

    /// The WebSocket closed before the switch: the session stays here.
    func secondaryClosed(_ channel: UpgradedWebSocketChannel) {
        if secondary === channel { secondary = nil }
    }

    /// The long poll's last message: `n` goes out as this transport's last message, and the session moves whole to
    /// the WebSocket, which then hands on what it received meanwhile.
    private func switchToSecondary() {
        guard let session, let secondary else { return }
        _ = send(message: UpgradeControl.endOfTransmission)
        state = .ending
        self.session = nil
        self.secondary = nil
        metrics.longPollUpgrades.increment()
        let waiting = unread
        unread.removeAll()
        session.channel = secondary
        secondary.attach(session, receivedBefore: waiting)
        scheduleAnswer()
    }

    // MARK: - WireChannel

    var transport: WireTransport { .longPolling }
    var isClosed: Bool { state != .open }
    var pendingOutboundBytes: Int { outboxBytes }

    func send(message: [UInt8]) -> Bool {
        guard message.count <= Self.maxMessageBytes else { return false }
        guard state != .ended else { return true }
        outbox.append(message)
        outboxBytes += message.count
        if outboxBytes > settings.outboxLimitBytes, state == .open {
            metrics.longPollSlowConsumers.increment()
            outbox.removeAll()
            outboxStart = 0
            outboxBytes = 0
            fail("slow consumer: more than \(settings.outboxLimitBytes) bytes waited for polls")
            return true
        }
        scheduleAnswer()
        return true
    }

    func send(sharedFrames: ByteChunk) {
        for payload in WebSocketFrameEncoder.payloads(ofEncodedFrames: sharedFrames.bytes) {
            guard case .message(let message)? = try? pushAssembler.receive(payload) else { continue }
            _ = send(message: message)
        }
    }

    func flushNow() {
        if held != nil, outboxStart < outbox.count { answerHeld() }
    }

    func pauseReading() {
        paused = true
    }

    func resumeReading() {
        paused = false
        while !paused, state == .open, !unread.isEmpty {
            let message = unread.removeFirst()
            session?.receive(message)
        }
    }

    func close(code: UInt16, reason: String) {
        end()
    }
}

/// Where a poll's answer goes: the HTTP request waiting for it, or a test's recording.
protocol PollAnswer: Sendable {
    /// Sends `response`; called once.
    func respond(_ response: HTTPResponse)
}

extension PendingResponse: PollAnswer {}
