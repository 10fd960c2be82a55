import CEpoll
import Glibc
import Synchronization

/// What happened to the stalled subscriber (times are `monotonicNanoseconds()`, 0 when it did not happen).
struct StallOutcome {
    var pausedAt: UInt64 = 0
    var resumedAt: UInt64 = 0
    /// When it first held room 0's last value after resuming.
    var caughtUpAt: UInt64 = 0
    /// Updates it received during the workload (fewer than were written when the server conflated them).
    var deliveries = 0
    /// Why the connection ended, when the server closed it.
    var disconnectReason: String?
    var disconnectedAt: UInt64 = 0
    /// The value it held at the end.
    var lastValue: BenchValue?
}

extension Worker {
    /// Seconds the stalled subscriber must stay quiet after all puts were acknowledged before its value counts as
    /// final, when room 0 has several writers (with one writer its final sequence number is known).
    static let stallQuietSeconds = 1.0

    /// Fanout and rooms: writers put their quota (within their window, or at `--rate`); subscribers count what
    /// they receive; the stalled subscriber, when this worker owns it, stops reading for a while.
    func runFirebase() {
        guard let plan else { return }
        workloadStart = coordinator.startNanoseconds.load(ordering: .relaxed)
        if let rate = options.firebase.rate {
            writeInterval = max(1, UInt64(1e9 * Double(plan.writers) / rate))
        }
        var writers: [Int] = []
        for index in 0..<count {
            switch connections[index].role {
            case .writer: writers.append(index)
            case .subscriber: expected += plan.messagesPerRoom[connections[index].room]
            case .stalled, .none: break
            }
        }
        lastProgress = workloadStart
        measuring = true
        let deadline = workloadStart + UInt64(options.timeout * 1e9)
        let idleLimit = UInt64(options.stall * 1e9)
        var published = 0
        for index in writers { sendPuts(index, now: workloadStart) }
        while coordinator.phase == .running {
            let now = monotonicNanoseconds()
            controlStall(now: now)
            if writeInterval > 0 {
                for index in writers { sendPuts(index, now: now) }
            }
            let countedDone = result.received >= expected
                && writers.allSatisfy { connections[$0].acknowledged >= connections[$0].quota }
            if countedDone, stallSettled(now: now) { break }
            if now > deadline {
                noteError("timed out after \(format(options.timeout)) s: \(missingSummary(writers))")
                break
            }
            if !countedDone, now > lastProgress + idleLimit {
                noteError("no delivery or acknowledgement for \(format(options.stall)) s: \(missingSummary(writers))")
                break
            }
            poll(timeoutMilliseconds: pollTimeout(writers: writers, now: now))
            coordinator.delivered.add(result.received - published, ordering: .relaxed)
            published = result.received
        }
        measuring = false
        finishFirebase(writers: writers)
        coordinator.finishedWorkers.add(1, ordering: .relaxed)
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 10)
        }
    }

    /// Copies this worker's counts into its result.
    private func finishFirebase(writers: [Int]) {
        guard let plan else { return }
        for index in writers { result.sent += connections[index].sent }
        result.histogram = latencies
        result.timeline = timeline
        if let local = stalledLocal {
            let connection = connections[local]
            if connection.lastWriter >= 0 {
                stall.lastValue = BenchValue(
                    sequence: connection.lastSequence, sentAt: 0, writer: connection.lastWriter)
            }
            result.stall = stall
        }
        for index in 0..<count where connections[index].role == .subscriber {
            // The reference subscriber is the first subscriber of room 0 (global index `writers`).
            if connections[index].room == 0, isReference(index, plan: plan), connections[index].lastWriter >= 0 {
                result.referenceValue = BenchValue(
                    sequence: connections[index].lastSequence, sentAt: 0, writer: connections[index].lastWriter)
            }
        }
    }

    private func isReference(_ index: Int, plan: FirebasePlan) -> Bool {
        index * options.threads + workerIndex == plan.referenceIndex
    }

    /// What is still missing, for an error message.
    private func missingSummary(_ writers: [Int]) -> String {
        let unacknowledged = writers.reduce(0) { $0 + connections[$1].quota - connections[$1].acknowledged }
        return "\(max(0, expected - result.received)) deliveries missing here, \(unacknowledged) puts unacknowledged"
    }

    /// Milliseconds to wait for readiness: until the next paced put is due (rounded up), at most 10.
    private func pollTimeout(writers: [Int], now: UInt64) -> Int32 {
        guard writeInterval > 0 else { return 10 }
        var next = UInt64.max
        for index in writers where connections[index].sent < connections[index].quota {
            next = min(next, nextPutTime(index))
        }
        guard next != .max else { return 10 }
        guard next > now else { return 0 }
        return Int32(min(10, (next - now + 999_999) / 1_000_000))
    }

    /// Stops and later resumes reading the stalled subscriber's socket, by taking it out of the epoll set.
    private func controlStall(now: UInt64) {
        guard let local = stalledLocal, connections[local].state == .open else { return }
        let settings = options.firebase
        if stall.pausedAt == 0, now >= workloadStart + UInt64(settings.stallAfter * 1e9) {
            _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, connections[local].fd, nil)
            connections[local].paused = true
            stall.pausedAt = now
        } else if connections[local].paused, now >= stall.pausedAt + UInt64(settings.stallSeconds * 1e9) {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | (connections[local].wantsWritable ? EPOLLOUT.rawValue : 0)
            event.data.u64 = UInt64(local)
            if epoll_ctl(epollFD, EPOLL_CTL_ADD, connections[local].fd, &event) != 0 {
                drop(local, reason: "epoll_ctl: \(errnoText())")
            }
            connections[local].paused = false
            connections[local].lastRead = now
            stall.resumedAt = now
        }
    }

    /// Whether the stalled subscriber (if this worker owns it) is done: disconnected, or resumed and holding
    /// room 0's last value.
    private func stallSettled(now: UInt64) -> Bool {
        guard let local = stalledLocal, let plan else { return true }
        if connections[local].state != .open { return true }
        guard stall.resumedAt != 0 else { return false }
        if let final = plan.finalValueOfRoomZero {
            guard connections[local].lastWriter == final.writer, connections[local].lastSequence == final.sequence
            else { return false }
            if stall.caughtUpAt == 0 { stall.caughtUpAt = now }
            return true
        }
        guard coordinator.acknowledged.load(ordering: .relaxed) >= options.messages,
            now >= connections[local].lastRead + UInt64(Self.stallQuietSeconds * 1e9)
        else { return false }
        if stall.caughtUpAt == 0 { stall.caughtUpAt = connections[local].lastRead }
        return true
    }
}
