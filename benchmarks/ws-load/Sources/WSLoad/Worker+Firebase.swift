import Glibc
import Synchronization

/// The Firebase wire protocol on a connection (wire-protocol.md §2–§6, §11): reassembling split messages,
/// the hello, the listen and its `ok`, acknowledgements of puts, and the pushes subscribers count.
extension Worker {
    /// Most bytes a split message may gather (count frame and pieces) before the connection is dropped.
    static let maximumMessageBytes = 64 << 20
    /// Receive buffer of the stalled subscriber's socket, small so that the server feels its stall quickly.
    static let stalledReceiveBuffer: Int32 = 4096

    /// Handles a WebSocket message gathered in `Connection.message`; returns false when the connection was dropped.
    func firebaseGatheredFrame(_ index: Int) -> Bool {
        var gathered: [UInt8] = []
        swap(&gathered, &connections[index].message)
        let alive = gathered.withUnsafeBufferPointer { firebaseFrame(index, $0) }
        gathered.removeAll(keepingCapacity: true)
        if connections[index].message.isEmpty { swap(&gathered, &connections[index].message) }
        return alive
    }

    /// Handles one WebSocket text message: a count frame, a piece of a split message, or a whole message (§2.2).
    func firebaseFrame(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if connections[index].piecesRemaining > 0 {
            guard connections[index].pieces.count + bytes.count <= Self.maximumMessageBytes else {
                drop(index, reason: "protocol error: split message over \(Self.maximumMessageBytes) bytes")
                return false
            }
            connections[index].pieces.append(contentsOf: bytes)
            connections[index].piecesRemaining -= 1
            guard connections[index].piecesRemaining == 0 else { return true }
            var whole: [UInt8] = []
            swap(&whole, &connections[index].pieces)
            let alive = whole.withUnsafeBufferPointer { firebaseMessage(index, $0) }
            whole.removeAll(keepingCapacity: true)
            if connections[index].pieces.isEmpty { swap(&whole, &connections[index].pieces) }
            return alive
        }
        if let count = Self.pieceCount(bytes) {
            connections[index].piecesRemaining = count
            return true
        }
        return firebaseMessage(index, bytes)
    }

    /// The piece count when `bytes` is a count frame: 1 to 6 ASCII digits, not zero (§2.2).
    static func pieceCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard (1...6).contains(bytes.count) else { return nil }
        var count = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            count = count * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return count > 0 ? count : nil
    }

    /// Acts on one complete message; returns false when the connection was dropped.
    private func firebaseMessage(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if let plan, connections[index].ready, connections[index].role != .writer,
            let value = plan.pushPrefixes[connections[index].room].withUnsafeBufferPointer({
                BenchPush.value(bytes, prefix: $0)
            })
        {
            deliver(index, value, plan: plan)
            return true
        }
        switch FirebaseMessage.classify(bytes) {
        case .hello:
            helloArrived(index)
        case .response(let request, let ok, let status):
            responseArrived(index, request: request, ok: ok, status: String(decoding: bytes[status], as: UTF8.self))
        case .push(let merge, let path, let data):
            pushArrived(index, bytes, merge: merge, path: path, data: data)
        case .control:
            break
        case .otherPush:
            if connections[index].ready { result.unexpectedPushes += 1 }
        case .malformed:
            let text = String(decoding: bytes.prefix(120), as: UTF8.self)
            drop(index, reason: "cannot follow the server message \(text)")
            return false
        }
        return connections[index].state == .open
    }

    private func helloArrived(_ index: Int) {
        guard !connections[index].helloSeen else { return }
        connections[index].helloSeen = true
        if connections[index].role == .writer {
            markReady(index)
        } else {
            sendListen(index)
        }
    }

    private func responseArrived(_ index: Int, request: Int64, ok: Bool, status: @autoclosure () -> String) {
        if connections[index].role == .writer {
            connections[index].acknowledged += 1
            result.lastAck = monotonicNanoseconds()
            if ok {
                result.acks += 1
            } else {
                result.rejectedPuts += 1
                noteError("put \(request) answered \(status())")
            }
            coordinator.acknowledged.add(1, ordering: .relaxed)
        } else if !connections[index].ready, request == 1 {
            if ok {
                markReady(index)
            } else {
                drop(index, reason: "listen answered \(status())")
            }
        }
    }

    /// Counts a subscriber's delivery: its latency, its order, and the value it now holds.
    ///
    /// Deliveries count from the listen's `ok` on (the data pushed with the listen comes before it), not from the
    /// workload's start: another worker's writer may start putting before this worker has seen the start.
    @inline(__always)
    private func pushArrived(
        _ index: Int, _ bytes: UnsafeBufferPointer<UInt8>, merge: Bool, path: Range<Int>, data: Int
    ) {
        guard connections[index].ready else { return }
        guard let plan, connections[index].role != .writer,
            FirebaseMessage.samePath(bytes, path, plan.roomPaths[connections[index].room]),
            let value = BenchValue(bytes, objectAt: data)
        else {
            result.unexpectedPushes += 1
            return
        }
        deliver(index, value, plan: plan)
    }

    /// Records one update delivered to a ready subscriber.
    @inline(__always)
    private func deliver(_ index: Int, _ value: BenchValue, plan: FirebasePlan) {
        if connections[index].role == .stalled {
            connections[index].lastWriter = value.writer
            connections[index].lastSequence = value.sequence
            connections[index].lastRead = monotonicNanoseconds()
            stall.deliveries += 1
            return
        }
        let now = readTime
        let sentAt = coordinator.clockOrigin &+ UInt64(truncatingIfNeeded: value.sentAt)
        latencies?.record(nanoseconds: now > sentAt ? now - sentAt : 0)
        if plan.writersPerRoom[connections[index].room] == 1, value.sequence != connections[index].lastSequence + 1 {
            result.outOfOrder += 1
        }
        result.received += 1
        result.lastDelivery = now
        timeline.record(at: now, start: coordinator.startNanoseconds.load(ordering: .relaxed), latency: now &- sentAt)
        connections[index].lastWriter = value.writer
        connections[index].lastSequence = value.sequence
    }

    private func markReady(_ index: Int) {
        connections[index].ready = true
        connections[index].lastWriter = -1
        connections[index].lastSequence = 0
        result.opened += 1
        coordinator.opened.add(1, ordering: .relaxed)
    }

    /// Sends the default listen `{"t":"d","d":{"r":1,"a":"q","b":{"p":PATH,"h":""}}}` (§6.5).
    private func sendListen(_ index: Int) {
        guard let plan else { return }
        messageScratch.removeAll(keepingCapacity: true)
        messageScratch.append(contentsOf: #"{"t":"d","d":{"r":1,"a":"q","b":{"p":""#.utf8)
        messageScratch.append(contentsOf: plan.roomPaths[connections[index].room])
        messageScratch.append(contentsOf: #"","h":""}}}"#.utf8)
        let end = messageScratch.withUnsafeBytes { writeFrame(opcode: 0x1, payload: $0, tag: nil, at: 0) }
        send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
    }

    /// Sends the writer's puts that are due: within its window of unacknowledged puts, or with `--rate` those
    /// whose time has come; several frames per `send`.
    func sendPuts(_ index: Int, now: UInt64) {
        guard measuring, connections[index].role == .writer else { return }
        let frameLimit = sendCapacity - (options.payload + 256)
        while connections[index].state == .open, connections[index].outbound.isEmpty {
            var end = 0
            while connections[index].sent < connections[index].quota, end <= frameLimit, putIsDue(index, now: now) {
                buildPut(index)
                end = messageScratch.withUnsafeBytes { writeFrame(opcode: 0x1, payload: $0, tag: nil, at: end) }
                connections[index].sent += 1
                connections[index].nextRequest += 1
            }
            guard end > 0 else { return }
            send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
        }
    }

    /// Whether the writer may send its next put now.
    @inline(__always)
    private func putIsDue(_ index: Int, now: UInt64) -> Bool {
        if writeInterval == 0 {
            return connections[index].sent - connections[index].acknowledged < options.window
        }
        return now >= nextPutTime(index)
    }

    /// When the writer's next put is due with `--rate`.
    func nextPutTime(_ index: Int) -> UInt64 {
        let writers = UInt64(options.firebase.writers)
        let offset = writeInterval / writers * UInt64(connections[index].writerIndex)
        return workloadStart &+ offset &+ UInt64(connections[index].sent) &* writeInterval
    }

    /// Builds the writer's next put in `messageScratch`:
    /// `{"t":"d","d":{"r":R,"a":"p","b":{"p":PATH,"d":{"pad":"xx…","seq":S,"ts":T,"w":W}}}}` (§6.8), the data
    /// object padded to `--payload` bytes.
    private func buildPut(_ index: Int) {
        guard let plan else { return }
        let writer = connections[index].writerIndex
        let (room, sequence) = plan.target(ofWriter: writer, put: connections[index].sent)
        let sentAt = monotonicNanoseconds() &- coordinator.clockOrigin
        let unpadded = 28 + decimalDigits(UInt64(sequence)) + decimalDigits(sentAt) + decimalDigits(UInt64(writer))
        messageScratch.removeAll(keepingCapacity: true)
        messageScratch.append(contentsOf: #"{"t":"d","d":{"r":"#.utf8)
        appendDecimal(UInt64(connections[index].nextRequest), to: &messageScratch)
        messageScratch.append(contentsOf: #","a":"p","b":{"p":""#.utf8)
        messageScratch.append(contentsOf: plan.roomPaths[room])
        messageScratch.append(contentsOf: #"","d":{"pad":""#.utf8)
        for _ in 0..<max(0, options.payload - unpadded) { messageScratch.append(UInt8(ascii: "x")) }
        messageScratch.append(contentsOf: #"","seq":"#.utf8)
        appendDecimal(UInt64(sequence), to: &messageScratch)
        messageScratch.append(contentsOf: #","ts":"#.utf8)
        appendDecimal(sentAt, to: &messageScratch)
        messageScratch.append(contentsOf: #","w":"#.utf8)
        appendDecimal(UInt64(writer), to: &messageScratch)
        messageScratch.append(contentsOf: "}}}}".utf8)
    }
}

/// Digits of `value` in decimal.
func decimalDigits(_ value: UInt64) -> Int {
    var digits = 1
    var rest = value / 10
    while rest > 0 {
        digits += 1
        rest /= 10
    }
    return digits
}

/// Appends `value` in decimal to `bytes` without allocating (beyond `bytes`' own growth).
func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
    var buffer: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &buffer) { raw in
        var position = raw.count
        var rest = value
        repeat {
            position -= 1
            raw[position] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        } while rest > 0
        bytes.append(contentsOf: raw[position...])
    }
}
