/// Redis pub/sub and NATS over plain TCP: the systems people pick for fan-out, measured the same way as Canopy.
///
/// Subscribers subscribe to their room's topic and are ready once the server confirmed it (Redis `subscribe`,
/// NATS `PONG` after `SUB`). A Redis writer publishes and counts each `PUBLISH`'s integer reply as the
/// acknowledgement (a subscribed Redis connection may not publish); a NATS writer subscribes to the topics it
/// writes to and counts its own copies as the acknowledgements, as MQTT and raw WebSocket writers do.
extension Worker {
    /// Starts the protocol on a connected plain-TCP socket.
    func startPeer(_ index: Int) {
        messageScratch.removeAll(keepingCapacity: true)
        let topic = peerTopic(index)
        switch plan.wireProtocol {
        case .redis:
            guard connections[index].role != .writer else {
                markReady(index)
                return
            }
            PeerProtocols.appendRedisSubscribe(topic: topic, to: &messageScratch)
        default:
            var subjects = [topic]
            if connections[index].role == .writer {
                subjects = RunPlan.rooms(ofWriter: connections[index].writerIndex, writers: plan.writers,
                                         rooms: plan.rooms).map { plan.listenPaths[$0] }
            }
            messageScratch.append(contentsOf: PeerProtocols.natsConnect)
            PeerProtocols.appendNATSSubscribe(subjects: subjects, to: &messageScratch)
        }
        messageScratch.withUnsafeBytes { send(index, $0) }
    }

    /// The topic (Redis channel, NATS subject) of the connection's room, or its own in the connections scenario.
    func peerTopic(_ index: Int) -> [UInt8] {
        var topic = plan.listenPaths[connections[index].room]
        if plan.scenario == .connections, !configuration.sharedPath {
            topic += Array(".c\(connections[index].global)".utf8)
        }
        return topic
    }

    /// Handles bytes from a peer server, keeping an incomplete message for the next read; returns false when the
    /// connection was dropped.
    func peerBytes(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        streamed(index, bytes.assumingMemoryBound(to: UInt8.self), limit: PeerProtocols.maximumBytes + 64,
                 what: "a message") { peerMessages(index, $0) }
    }

    /// Handles every whole message in `bytes`; returns the bytes consumed, or -1 when the connection was dropped.
    private func peerMessages(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var position = 0
        while position < bytes.count {
            let scan = plan.wireProtocol == .redis
                ? PeerProtocols.nextRedis(in: bytes, from: position)
                : PeerProtocols.nextNATS(in: bytes, from: position)
            switch scan {
            case .incomplete:
                return position
            case .malformed(let problem):
                drop(index, reason: "protocol error: \(problem)")
                return -1
            case .message(let message, let end):
                guard peerMessage(index, bytes, message) else { return -1 }
                position = end
            }
        }
        return position
    }

    /// Acts on one message; returns false when the connection was dropped.
    private func peerMessage(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ message: PeerMessage) -> Bool {
        switch message {
        case .payload(let range):
            publishedValueArrived(index, BenchValue(UnsafeBufferPointer(rebasing: bytes[range]), objectAt: 0))
        case .subscribed:
            markReady(index)
        case .acknowledged:
            guard connections[index].role == .writer else { return true }
            // Replies come in order: this one answers the oldest unacknowledged write.
            let outstanding = connections[index].sent - connections[index].acknowledged
            let request = Int(truncatingIfNeeded: connections[index].nextRequest) - outstanding
            connections[index].acknowledged += 1
            result.acks += 1
            result.lastAck = readTime
            interval.acks += 1
            let slot = connections[index].writerSlot &* sendTimeRing &+ request & (sendTimeRing - 1)
            interval.writeLatency.record(nanoseconds: readTime &- sendTimes[slot])
        case .ping:
            Array("PONG\r\n".utf8).withUnsafeBytes { send(index, $0) }
        case .error(let text):
            drop(index, reason: "the server answered \(text.prefix(200))")
            return false
        case .other:
            break
        }
        return connections[index].state == .open
    }
}
