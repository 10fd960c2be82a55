import Synchronization

extension Worker {
    /// Echo: every connection keeps one message in flight until the main thread stops the run.
    func runEcho() {
        latencies = LatencyHistogram()
        measuring = true
        let now = monotonicNanoseconds()
        for index in 0..<count where connections[index].state == .open {
            sendEcho(index, at: now)
        }
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 10)
        }
        measuring = false
        result.histogram = latencies
        coordinator.finishedWorkers.add(1, ordering: .relaxed)
    }

    /// Broadcast: senders publish their quota within their windows; every connection counts what it receives.
    func runBroadcast() {
        expected = result.opened * options.messages
        let start = monotonicNanoseconds()
        let deadline = start + UInt64(options.timeout * 1e9)
        let stall = UInt64(options.stall * 1e9)
        lastProgress = start
        measuring = true
        for index in 0..<count where connections[index].isSender {
            topUp(index)
        }
        while result.received < expected, coordinator.phase == .running {
            poll(timeoutMilliseconds: 10)
            let now = monotonicNanoseconds()
            if now > lastProgress + stall {
                let missing = expected - result.received
                noteError("no delivery for \(format(options.stall)) s with \(missing) messages missing")
                break
            }
            if now > deadline {
                noteError("timed out with \(expected - result.received) messages missing")
                break
            }
        }
        measuring = false
        if result.lastDelivery == 0 { result.lastDelivery = lastProgress }
        for index in 0..<count { result.sent += connections[index].sent }
        coordinator.finishedWorkers.add(1, ordering: .relaxed)
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 10)
        }
    }

    /// Idle: hold the connections (answering pings) until the main thread stops the run.
    func runIdle() {
        coordinator.finishedWorkers.add(1, ordering: .relaxed)
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 100)
        }
    }

    /// Called for every complete data message a connection receives.
    @inline(__always)
    func messageArrived(_ index: Int) {
        guard measuring else { return }
        switch options.mode {
        case .echo:
            let now = monotonicNanoseconds()
            latencies?.record(nanoseconds: now &- connections[index].sentAt)
            result.roundTrips += 1
            sendEcho(index, at: now)
        case .broadcast:
            if connections[index].isSender,
                options.senders == 1
                    || (connections[index].tagBytesWanted == 0
                        && connections[index].tagAccumulator == connections[index].senderTag)
            {
                connections[index].ownReceived += 1
            }
            if result.received == expected {
                result.lastDelivery = monotonicNanoseconds()
            }
        case .idle, .fanout, .rooms:
            break
        }
    }

    private func sendEcho(_ index: Int, at now: UInt64) {
        connections[index].sentAt = now
        let end = payload.withUnsafeBytes { writeFrame(opcode: frameOpcode, payload: $0, tag: nil, at: 0) }
        send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
    }

    /// Sends as many of a sender's messages as its window allows, several frames per `send`.
    func topUp(_ index: Int) {
        guard measuring, options.mode == .broadcast else { return }
        let frameSize = options.payload + 14
        let tag: UInt64? = options.senders > 1 ? connections[index].senderTag : nil
        while connections[index].state == .open, connections[index].outbound.isEmpty {
            var end = 0
            while connections[index].sent < connections[index].quota,
                connections[index].sent - connections[index].ownReceived < options.window,
                end + frameSize <= sendCapacity
            {
                end = payload.withUnsafeBytes { writeFrame(opcode: frameOpcode, payload: $0, tag: tag, at: end) }
                connections[index].sent += 1
            }
            guard end > 0 else { return }
            send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
        }
    }
}
