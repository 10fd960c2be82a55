import Glibc

/// MQTT 3.1.1 over WebSocket (binary messages carry a byte stream of packets, which may be cut anywhere): CONNECT
/// and SUBSCRIBE to become ready, then PUBLISH both ways at QoS 0. Writers subscribe too: their own messages coming
/// back are their acknowledgements.
extension Worker {
    /// Sends CONNECT once the WebSocket is open.
    func sendMQTTConnect(_ index: Int) {
        messageScratch.removeAll(keepingCapacity: true)
        let clientID = Array("canopy-bench-\(getpid())-\(connections[index].global)".utf8)
        MQTTPacket.appendConnect(clientID: clientID, to: &messageScratch)
        sendScratchMessage(index, opcode: 0x2)
    }

    /// Handles the bytes of one WebSocket message: every whole packet, keeping a packet it cuts off for the next.
    func mqttBytes(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        streamed(index, bytes, limit: MQTTPacket.maximumBytes + 8, what: "an MQTT packet") { mqttPackets(index, $0) }
    }

    /// Handles every whole packet in `bytes`; returns the bytes consumed, or -1 when the connection was dropped.
    private func mqttPackets(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var position = 0
        while position < bytes.count {
            switch MQTTPacket.next(in: bytes, from: position) {
            case .incomplete:
                return position
            case .malformed:
                drop(index, reason: "protocol error: malformed MQTT packet")
                return -1
            case .packet(let packet):
                guard mqttPacket(index, bytes, packet) else { return -1 }
                position = packet.end
            }
        }
        return position
    }

    /// Acts on one packet; returns false when the connection was dropped.
    private func mqttPacket(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ packet: MQTTPacket.Found) -> Bool {
        switch packet.type {
        case MQTTPacket.publish:
            guard let payload = MQTTPacket.publishPayload(bytes, packet) else {
                drop(index, reason: "protocol error: malformed PUBLISH")
                return false
            }
            let message = UnsafeBufferPointer(rebasing: bytes[payload])
            let value = BenchPush.value(message, prefix: UnsafeBufferPointer(start: nil, count: 0), closers: 0)
                ?? BenchValue(message, objectAt: 0)
            publishedValueArrived(index, value)
        case MQTTPacket.connectAcknowledgement:
            guard packet.body.count == 2, bytes[packet.body.lowerBound + 1] == 0 else {
                let code = packet.body.count == 2 ? Int(bytes[packet.body.lowerBound + 1]) : -1
                drop(index, reason: "MQTT CONNECT refused (return code \(code))")
                return false
            }
            connections[index].helloSeen = true
            sendSubscribe(index)
        case MQTTPacket.subscribeAcknowledgement:
            guard packet.body.count >= 3, bytes[packet.body.upperBound - 1] != 0x80 else {
                drop(index, reason: "MQTT SUBSCRIBE refused")
                return false
            }
            markReady(index)
        default:
            break
        }
        return connections[index].state == .open
    }

    /// Subscribes to the room's topic (or, in the connections scenario, the connection's own topic).
    private func sendSubscribe(_ index: Int) {
        var topic = plan.listenPaths[connections[index].room]
        if plan.scenario == .connections, !configuration.sharedPath {
            topic += Array("/c\(connections[index].global)".utf8)
        }
        messageScratch.removeAll(keepingCapacity: true)
        MQTTPacket.appendSubscribe(topic: topic, to: &messageScratch)
        sendScratchMessage(index, opcode: 0x2)
    }
}
