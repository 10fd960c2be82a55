import Primitives

/// Writers and what subscribers do with each update: building and pacing the writes of every protocol, and
/// counting deliveries.
extension Worker {
    /// Records one update delivered to a ready subscriber: its latency, its order, and the value it now holds.
    ///
    /// Deliveries count from the listen's `ok` on (the data pushed with the listen comes before it), not from the
    /// workload's start: another worker's writer may start writing before this worker has seen the start.
    @inline(__always)
    func deliver(_ index: Int, _ value: BenchValue) {
        if connections[index].role == .stalled {
            connections[index].lastWriter = value.writer
            connections[index].lastSequence = value.sequence
            connections[index].lastRead = readTime
            stall.deliveries += 1
            return
        }
        let now = readTime
        let sentAt = coordinator.clockOrigin &+ UInt64(truncatingIfNeeded: value.sentAt)
        interval.latency.record(nanoseconds: now > sentAt ? now - sentAt : 0)
        interval.deliveries += 1
        if plan.checksOrder(of: connections[index].room), value.sequence != connections[index].lastSequence + 1 {
            result.outOfOrder += 1
        }
        result.received += 1
        result.lastDelivery = now
        connections[index].lastWriter = value.writer
        connections[index].lastSequence = value.sequence
    }

    /// Counts a writer's own update come back (MQTT and raw WebSocket, where that is the acknowledgement).
    @inline(__always)
    func ownCopyArrived(_ index: Int, _ value: BenchValue) {
        guard value.writer == Int64(connections[index].writerIndex) else { return }
        connections[index].acknowledged += 1
        result.acks += 1
        result.lastAck = readTime
        interval.acks += 1
        let sentAt = coordinator.clockOrigin &+ UInt64(truncatingIfNeeded: value.sentAt)
        interval.writeLatency.record(nanoseconds: readTime > sentAt ? readTime - sentAt : 0)
    }

    /// Sends the writer's writes that are due — within its window of unacknowledged writes, or with `--rate` those
    /// whose time has come — several frames per `send`.
    func sendWrites(_ index: Int, now: UInt64) {
        guard measuring, connections[index].role == .writer else { return }
        let frameLimit = sendCapacity - (configuration.payload + 512)
        let opcode: UInt8 = plan.wireProtocol == .mqtt ? 0x2 : 0x1
        while connections[index].state == .open, connections[index].outbound.isEmpty {
            var end = 0
            while connections[index].sent < connections[index].quota, end <= frameLimit, writeIsDue(index, now: now) {
                let sentAt = buildWrite(index)
                if plan.wireProtocol == .firebase || plan.wireProtocol == .redis {
                    let request = Int(truncatingIfNeeded: connections[index].nextRequest)
                    sendTimes[connections[index].writerSlot &* sendTimeRing &+ request & (sendTimeRing - 1)] = sentAt
                }
                end = messageScratch.withUnsafeBytes { message in
                    guard plan.wireProtocol.isPlainTCP else { return writeFrame(opcode: opcode, payload: message, at: end) }
                    (sendScratch + end).copyMemory(from: message.baseAddress!, byteCount: message.count)
                    return end + message.count
                }
                connections[index].sent += 1
                connections[index].nextRequest += 1
                interval.sent += 1
                sentTotal += 1
            }
            guard end > 0 else { return }
            send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
        }
    }

    /// Whether the writer may send its next write now.
    @inline(__always)
    private func writeIsDue(_ index: Int, now: UInt64) -> Bool {
        if writeInterval == 0 {
            return connections[index].sent - connections[index].acknowledged < configuration.window
        }
        return now >= nextWriteTime(index)
    }

    /// When the writer's next write is due with `--rate`.
    func nextWriteTime(_ index: Int) -> UInt64 {
        let writers = UInt64(plan.writers)
        let offset = writeInterval / writers * UInt64(connections[index].writerIndex)
        return workloadStart &+ offset &+ UInt64(connections[index].sent) &* writeInterval
    }

    /// Builds the writer's next write in `messageScratch` and returns its send time (`monotonicNanoseconds()`):
    /// a Firebase put `{"t":"d","d":{"r":R,"a":"p","b":{"p":PATH,"d":OBJECT}}}` (§6.8), an MQTT PUBLISH of
    /// OBJECT, a Redis `PUBLISH` or NATS `PUB` of OBJECT, or OBJECT alone, where OBJECT is `{"pad":"xx…","seq":S,"ts":T,"w":W}` padded to `--payload` bytes.
    private func buildWrite(_ index: Int) -> UInt64 {
        let writer = connections[index].writerIndex
        let (room, sequence) = plan.target(ofWriter: writer, put: connections[index].sent)
        let now = monotonicNanoseconds()
        let sentAt = now &- coordinator.clockOrigin
        messageScratch.removeAll(keepingCapacity: true)
        switch plan.wireProtocol {
        case .firebase:
            messageScratch.append(contentsOf: #"{"t":"d","d":{"r":"#.utf8)
            ASCIIBytes.appendDecimal(UInt64(connections[index].nextRequest), to: &messageScratch)
            messageScratch.append(contentsOf: #","a":"p","b":{"p":""#.utf8)
            messageScratch.append(contentsOf: plan.listenPaths[room])
            if plan.scenario == .writes || plan.scenario == .query {
                messageScratch.append(contentsOf: "/w".utf8)
                ASCIIBytes.appendDecimal(UInt64(writer), to: &messageScratch)
            }
            if plan.scenario == .query {
                messageScratch.append(UInt8(ascii: "s"))
                ASCIIBytes.appendDecimal(UInt64(sequence), to: &messageScratch)
            }
            messageScratch.append(contentsOf: #"","d":"#.utf8)
            appendBenchObject(sequence: sequence, sentAt: sentAt, writer: writer)
            messageScratch.append(contentsOf: "}}}".utf8)
        case .mqtt:
            let topic = plan.listenPaths[room]
            let objectBytes = Self.benchObjectLength(
                payload: configuration.payload, sequence: sequence, sentAt: sentAt, writer: writer)
            MQTTPacket.appendPublishHeader(topic: topic, payloadBytes: objectBytes, to: &messageScratch)
            appendBenchObject(sequence: sequence, sentAt: sentAt, writer: writer)
        case .raw:
            appendBenchObject(sequence: sequence, sentAt: sentAt, writer: writer)
        case .redis, .nats:
            let objectBytes = Self.benchObjectLength(
                payload: configuration.payload, sequence: sequence, sentAt: sentAt, writer: writer)
            if plan.wireProtocol == .redis {
                PeerProtocols.appendRedisPublishHead(
                    topic: plan.listenPaths[room], payloadBytes: objectBytes, to: &messageScratch)
            } else {
                PeerProtocols.appendNATSPublishHead(
                    subject: plan.listenPaths[room], payloadBytes: objectBytes, to: &messageScratch)
            }
            appendBenchObject(sequence: sequence, sentAt: sentAt, writer: writer)
            messageScratch.append(contentsOf: "\r\n".utf8)
        }
        return now
    }

    /// Bytes of the update object: `--payload`, or more when the numbers alone need more.
    static func benchObjectLength(payload: Int, sequence: Int, sentAt: UInt64, writer: Int) -> Int {
        max(payload, 28 + decimalDigitCount(UInt64(sequence)) + decimalDigitCount(sentAt) + decimalDigitCount(UInt64(writer)))
    }

    /// Appends `{"pad":"xx…","seq":S,"ts":T,"w":W}`, padded to `--payload` bytes, to `messageScratch`.
    private func appendBenchObject(sequence: Int, sentAt: UInt64, writer: Int) {
        let unpadded = 28 + decimalDigitCount(UInt64(sequence)) + decimalDigitCount(sentAt) + decimalDigitCount(UInt64(writer))
        messageScratch.append(contentsOf: #"{"pad":""#.utf8)
        for _ in 0..<max(0, configuration.payload - unpadded) { messageScratch.append(UInt8(ascii: "x")) }
        messageScratch.append(contentsOf: #"","seq":"#.utf8)
        ASCIIBytes.appendDecimal(UInt64(sequence), to: &messageScratch)
        messageScratch.append(contentsOf: #","ts":"#.utf8)
        ASCIIBytes.appendDecimal(sentAt, to: &messageScratch)
        messageScratch.append(contentsOf: #","w":"#.utf8)
        ASCIIBytes.appendDecimal(UInt64(writer), to: &messageScratch)
        messageScratch.append(UInt8(ascii: "}"))
    }
}

