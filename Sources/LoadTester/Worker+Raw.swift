import Synchronization

/// Plain WebSocket messages: fan-out through a broadcast endpoint (every message goes to every connection, the
/// writer's own included), round trips through an echo endpoint, and idle connections.
extension Worker {
    /// Handles one message on a raw WebSocket connection.
    func rawMessage(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch connections[index].role {
        case .echo:
            guard measuring else { return true }
            let now = readTime
            interval.latency.record(nanoseconds: now &- connections[index].sentAt)
            interval.deliveries += 1
            result.received += 1
            result.lastDelivery = now
            sendEcho(index, at: now)
        case .writer, .subscriber, .stalled:
            let value = BenchPush.value(bytes, prefix: UnsafeBufferPointer(start: nil, count: 0), closers: 0)
                ?? BenchValue(bytes, objectAt: 0)
            guard let value else {
                result.unexpectedPushes += 1
                return true
            }
            if connections[index].role == .writer {
                ownCopyArrived(index, value)
            } else {
                deliver(index, value)
            }
        case .idle:
            break
        }
        return connections[index].state == .open
    }

    /// Echo: every connection keeps one message in flight until the reporter stops the run.
    func runEcho() {
        workloadStart = coordinator.startNanoseconds.load(ordering: .relaxed)
        measuring = true
        let now = monotonicNanoseconds()
        for index in 0..<count where connections[index].state == .open {
            sendEcho(index, at: now)
        }
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 10)
            rollInterval(now: monotonicNanoseconds())
            publishLiveCounts()
        }
        measuring = false
        finishWorkload()
    }

    /// Idle connections: hold them (answering pings) until the reporter stops the run.
    func runIdle() {
        workloadStart = coordinator.startNanoseconds.load(ordering: .relaxed)
        coordinator.finishedWorkers.add(1, ordering: .relaxed)
        while coordinator.phase == .running {
            poll(timeoutMilliseconds: 100)
        }
    }

    private func sendEcho(_ index: Int, at now: UInt64) {
        connections[index].sentAt = now
        let end = echoPayload.withUnsafeBytes { writeFrame(opcode: 0x1, payload: $0, at: 0) }
        send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
    }
}
