import CEpoll
import Glibc
import Synchronization

/// What happened to the stalled subscriber (times are `monotonicNanoseconds()`, 0 when it did not happen).
struct StallOutcome: Codable, Sendable {
    var pausedAt: UInt64 = 0
    var resumedAt: UInt64 = 0
    /// When it first held room 0's last value after resuming.
    var caughtUpAt: UInt64 = 0
    /// Updates it received during the workload (fewer than were written when the server conflated them).
    var deliveries = 0
    /// Why the connection ended, when the server closed it.
    var disconnectReason: String?
    /// The value it held at the end.
    var lastValue: BenchValue?
}

extension Worker {
    /// Seconds the stalled subscriber must stay quiet after all writes were acknowledged before its value counts
    /// as final, when room 0 has several writers (with one writer its final sequence number is known).
    static let stallQuietSeconds = 1.0

    /// fanout, rooms, query, writes: writers write their quota (within their window, or at `--rate`); subscribers
    /// count what they receive; the stalled subscriber, when this worker owns it, stops reading for a while.
    func runUpdates() {
        workloadStart = coordinator.startNanoseconds.load(ordering: .relaxed)
        if let rate = configuration.rate {
            writeInterval = max(1, UInt64(1e9 * Double(plan.writers) / rate))
        }
        var writers: [Int] = []
        for index in 0..<count {
            switch connections[index].role {
            case .writer where connections[index].ready: writers.append(index)
            case .subscriber where connections[index].ready: expected += plan.messagesPerRoom[connections[index].room]
            default: break
            }
        }
        lastProgress = workloadStart
        measuring = true
        let deadline = workloadStart + UInt64(configuration.timeout * 1e9)
        let idleLimit = UInt64(configuration.stallLimit * 1e9)
        for index in writers { sendWrites(index, now: workloadStart) }
        while coordinator.phase == .running {
            let now = monotonicNanoseconds()
            rollInterval(now: now)
            controlStall(now: now)
            if writeInterval > 0 {
                for index in writers { sendWrites(index, now: now) }
            }
            let countedDone = result.received >= expected
                && writers.allSatisfy { connections[$0].acknowledged >= connections[$0].quota }
            if countedDone, stallSettled(now: now) { break }
            if now > deadline {
                noteError("timed out after \(format(configuration.timeout)) s: \(missingSummary(writers))")
                break
            }
            if !countedDone, now > lastProgress + idleLimit {
                noteError(
                    "no delivery or acknowledgement for \(format(configuration.stallLimit)) s: "
                        + missingSummary(writers))
                break
            }
            poll(timeoutMilliseconds: pollTimeout(writers: writers, now: now))
            publishLiveCounts()
        }
        measuring = false
        for index in writers { result.sent += connections[index].sent }
        finishStall()
        finishWorkload()
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 10)
        }
    }

    /// Hands the current interval to the coordinator once its second is over.
    @inline(__always)
    func rollInterval(now: UInt64) {
        let second = now > workloadStart ? Int((now - workloadStart) / 1_000_000_000) : 0
        guard second > interval.second else { return }
        if !interval.isEmpty { coordinator.publish(interval) }
        interval.second = second
        interval.deliveries = 0
        interval.acks = 0
        interval.sent = 0
        interval.latency.reset()
        interval.writeLatency.reset()
    }

    /// Adds this worker's counts since the last call to the process's live totals.
    func publishLiveCounts() {
        let delivered = result.received - published.delivered
        let acks = result.acks - published.acks
        let sent = sentTotal - published.sent
        if delivered != 0 { coordinator.delivered.add(delivered, ordering: .relaxed) }
        if acks != 0 { coordinator.acknowledged.add(acks, ordering: .relaxed) }
        if sent != 0 { coordinator.sent.add(sent, ordering: .relaxed) }
        published = (result.received, result.acks, sentTotal)
    }

    /// Publishes the last interval and tells the reporter this worker is done.
    func finishWorkload() {
        publishLiveCounts()
        if !interval.isEmpty { coordinator.publish(interval) }
        interval = IntervalSample(second: interval.second + 1)
        coordinator.finishedWorkers.add(1, ordering: .relaxed)
    }

    /// Copies the stalled subscriber's and the reference subscriber's last values into the result.
    private func finishStall() {
        if let local = stalledLocal {
            let connection = connections[local]
            if connection.lastWriter >= 0 {
                stall.lastValue = BenchValue(
                    sequence: connection.lastSequence, sentAt: 0, writer: connection.lastWriter)
            }
            result.stall = stall
        }
        for index in 0..<count
        where connections[index].global == plan.referenceIndex && connections[index].lastWriter >= 0 {
            result.referenceValue = BenchValue(
                sequence: connections[index].lastSequence, sentAt: 0, writer: connections[index].lastWriter)
        }
    }

    /// What is still missing, for an error message.
    private func missingSummary(_ writers: [Int]) -> String {
        let unacknowledged = writers.reduce(0) { $0 + connections[$1].quota - connections[$1].acknowledged }
        return "\(max(0, expected - result.received)) deliveries missing here, \(unacknowledged) writes unacknowledged"
    }

    /// Milliseconds to wait for readiness: until the next paced write is due (rounded up), at most 10.
    private func pollTimeout(writers: [Int], now: UInt64) -> Int32 {
        guard writeInterval > 0 else { return 10 }
        var next = UInt64.max
        for index in writers where connections[index].sent < connections[index].quota {
            next = min(next, nextWriteTime(index))
        }
        guard next != .max else { return 10 }
        guard next > now else { return 0 }
        return Int32(min(10, (next - now + 999_999) / 1_000_000))
    }

    /// Stops and later resumes reading the stalled subscriber's socket, by taking it out of the epoll set.
    private func controlStall(now: UInt64) {
        guard let local = stalledLocal, connections[local].state == .open else { return }
        if stall.pausedAt == 0, now >= workloadStart + UInt64(configuration.stallAfter * 1e9) {
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, connections[local].fd, nil)
            connections[local].paused = true
            stall.pausedAt = now
        } else if connections[local].paused, now >= stall.pausedAt + UInt64(configuration.stallSeconds * 1e9) {
            connections[local].paused = false
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | (connections[local].wantsWritable ? EPOLLOUT.rawValue : 0)
            event.data.u64 = UInt64(local)
            if epoll_ctl(epollFD, EPOLL_CTL_ADD, connections[local].fd, &event) != 0 {
                drop(local, reason: "epoll_ctl: \(errnoText())")
            }
            connections[local].lastRead = now
            stall.resumedAt = now
        }
    }

    /// Whether the stalled subscriber (if this worker owns it) is done: disconnected, or resumed and holding room
    /// 0's last value.
    private func stallSettled(now: UInt64) -> Bool {
        guard let local = stalledLocal else { return true }
        if connections[local].state != .open { return true }
        guard stall.resumedAt != 0 else { return false }
        if let final = plan.finalValueOfRoomZero {
            guard connections[local].lastWriter == final.writer, connections[local].lastSequence == final.sequence
            else { return false }
            if stall.caughtUpAt == 0 { stall.caughtUpAt = now }
            return true
        }
        guard coordinator.acknowledged.load(ordering: .relaxed) >= plan.totalWrites,
            now >= connections[local].lastRead + UInt64(Self.stallQuietSeconds * 1e9)
        else { return false }
        if stall.caughtUpAt == 0 { stall.caughtUpAt = connections[local].lastRead }
        return true
    }
}
