import Glibc
import WebSocketDeflate

/// Server frames are scanned, not parsed into objects: the scanner reads headers and hands each data message's
/// payload to the protocol — in place when a whole uncompressed message is in one read, else gathered in
/// `Connection.message` (and inflated into the worker's scratch when compressed).
extension Worker {
    /// Scans received bytes for frames; returns false when the connection was dropped.
    func scan(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        let connection = connections + index
        let end = bytes.count
        var position = 0
        while position < end {
            if connection.pointee.payloadRemaining > 0 {
                let take = min(connection.pointee.payloadRemaining, end - position)
                let piece = UnsafeBufferPointer(start: base + position, count: take)
                if connection.pointee.opcode >= 8 {
                    connection.pointee.control.append(contentsOf: piece)
                } else if take == connection.pointee.frameLength, connection.pointee.fin,
                    !connection.pointee.compressed, connection.pointee.message.isEmpty
                {
                    guard messageArrived(index, piece) else { return false }
                } else {
                    guard connection.pointee.message.count + take <= Self.maximumMessageBytes else {
                        drop(index, reason: "protocol error: message over \(Self.maximumMessageBytes) bytes")
                        return false
                    }
                    connection.pointee.message.append(contentsOf: piece)
                }
                position += take
                connection.pointee.payloadRemaining -= take
                if connection.pointee.payloadRemaining == 0 {
                    guard frameEnded(index) else { return false }
                }
                continue
            }
            // Fast path: a whole header in this read.
            if connection.pointee.headerCount == 0, end - position >= 2 {
                let size = Self.headerSize(secondByte: base[position + 1])
                if end - position >= size {
                    let header = UnsafeBufferPointer(start: base + position, count: size)
                    position += size
                    guard beginFrame(index, header: header) else { return false }
                    continue
                }
            }
            // Slow path: a header split across reads, one byte at a time.
            let stored = connection.pointee.headerCount
            withUnsafeMutableBytes(of: &connection.pointee.header) { $0[stored] = base[position] }
            connection.pointee.headerCount += 1
            position += 1
            if connection.pointee.headerCount >= 2 {
                let size = Self.headerSize(secondByte: connection.pointee.header.1)
                if connection.pointee.headerCount == size {
                    connection.pointee.headerCount = 0
                    let header = connection.pointee.header
                    let started = withUnsafeBytes(of: header) { raw in
                        let bytes = raw.bindMemory(to: UInt8.self)
                        return beginFrame(index, header: UnsafeBufferPointer(rebasing: bytes[..<size]))
                    }
                    guard started else { return false }
                }
            }
        }
        return true
    }

    /// Header bytes implied by the second header byte; a masked server frame is rejected before its key is read.
    @inline(__always)
    private static func headerSize(secondByte: UInt8) -> Int {
        if secondByte & 0x80 != 0 { return 2 }
        switch secondByte & 0x7F {
        case 126: return 4
        case 127: return 10
        default: return 2
        }
    }

    /// Starts a frame from its complete header (RFC 6455 §5.2); returns false when the connection was dropped.
    private func beginFrame(_ index: Int, header: UnsafeBufferPointer<UInt8>) -> Bool {
        let first = header[0]
        let second = header[1]
        guard second & 0x80 == 0 else {
            drop(index, reason: "protocol error: masked frame from the server")
            return false
        }
        let connection = connections + index
        let opcode = first & 0x0F
        let rsv1 = first & 0x40 != 0
        // RSV1 marks a compressed message on its first frame only (RFC 7692 §6), and only once negotiated.
        let compressedStart = rsv1 && (opcode == 1 || opcode == 2) && connection.pointee.deflate != nil
        guard first & 0x30 == 0, !rsv1 || compressedStart else {
            drop(index, reason: "protocol error: reserved bits set")
            return false
        }
        var length = Int(second & 0x7F)
        if length == 126 {
            length = Int(header[2]) << 8 | Int(header[3])
        } else if length == 127 {
            var wide: UInt64 = 0
            for offset in 2..<10 { wide = wide << 8 | UInt64(header[offset]) }
            guard wide <= UInt64(Self.maximumMessageBytes) else {
                drop(index, reason: "protocol error: frame length \(wide) too large")
                return false
            }
            length = Int(wide)
        }
        connection.pointee.opcode = opcode
        connection.pointee.fin = first & 0x80 != 0
        if opcode >= 8 {
            guard length <= 125, connection.pointee.fin else {
                drop(index, reason: "protocol error: control frame too long or fragmented")
                return false
            }
            connection.pointee.control.removeAll(keepingCapacity: true)
        } else if opcode != 0 {
            connection.pointee.compressed = compressedStart
        }
        connection.pointee.frameLength = length
        connection.pointee.payloadRemaining = length
        return length > 0 || frameEnded(index)
    }

    /// Acts on a frame whose payload has been seen; returns false when the connection was dropped.
    private func frameEnded(_ index: Int) -> Bool {
        let connection = connections + index
        switch connection.pointee.opcode {
        case 0, 1, 2:
            if connection.pointee.fin {
                if connection.pointee.compressed {
                    return inflateGathered(index)
                }
                if !connection.pointee.message.isEmpty || connection.pointee.frameLength == 0 {
                    return gatheredMessageArrived(index)
                }
            }
        case 9:
            let payload = connection.pointee.control
            let end = payload.withUnsafeBytes { writeFrame(opcode: 0xA, payload: $0, at: 0) }
            send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
        case 10:
            break
        case 8:
            let control = connection.pointee.control
            let code = control.count >= 2 ? Int(control[0]) << 8 | Int(control[1]) : 1005
            drop(index, reason: "close frame from the server (code \(code))")
            return false
        default:
            drop(index, reason: "protocol error: unknown opcode \(connection.pointee.opcode)")
            return false
        }
        return connections[index].state == .open
    }

    /// Handles the message gathered in `Connection.message`, reusing its storage afterwards.
    private func gatheredMessageArrived(_ index: Int) -> Bool {
        var gathered: [UInt8] = []
        swap(&gathered, &connections[index].message)
        let alive = gathered.withUnsafeBufferPointer { messageArrived(index, $0) }
        gathered.removeAll(keepingCapacity: true)
        if connections[index].message.isEmpty { swap(&gathered, &connections[index].message) }
        return alive
    }

    /// Inflates the compressed message gathered in `Connection.message` into the worker's scratch and handles it.
    private func inflateGathered(_ index: Int) -> Bool {
        guard let codec = connections[index].deflate else { return false }
        inflated.removeAll(keepingCapacity: true)
        do {
            try connections[index].message.withUnsafeBytes {
                try codec.decode($0, isFinal: true, into: &inflated, maxOutputCount: Self.maximumMessageBytes)
            }
        } catch {
            drop(index, reason: "permessage-deflate: \(error)")
            return false
        }
        connections[index].message.removeAll(keepingCapacity: true)
        connections[index].compressed = false
        var message: [UInt8] = []
        swap(&message, &inflated)
        let alive = message.withUnsafeBufferPointer { messageArrived(index, $0) }
        swap(&message, &inflated)
        return alive
    }

    /// Hands one complete WebSocket data message to the run's protocol; returns false when the connection was
    /// dropped.
    @inline(__always)
    func messageArrived(_ index: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        switch plan.wireProtocol {
        case .firebase: return firebaseFrame(index, bytes)
        case .mqtt: return mqttBytes(index, bytes)
        case .raw: return rawMessage(index, bytes)
        case .redis, .nats: return false  // plain TCP: never framed (Worker+Peers)
        }
    }

    /// Writes one masked client frame (RFC 6455 §5.3) into `sendScratch` at `offset`; returns the offset after it.
    /// The caller guarantees room.
    func writeFrame(opcode: UInt8, payload: UnsafeRawBufferPointer, at offset: Int) -> Int {
        let frame = (sendScratch + offset).assumingMemoryBound(to: UInt8.self)
        let length = payload.count
        frame[0] = 0x80 | opcode
        var headerSize = 2
        if length <= 125 {
            frame[1] = 0x80 | UInt8(length)
        } else if length <= 0xFFFF {
            frame[1] = 0x80 | 126
            frame[2] = UInt8(length >> 8)
            frame[3] = UInt8(length & 0xFF)
            headerSize = 4
        } else {
            frame[1] = 0x80 | 127
            for shift in 0..<8 { frame[2 + shift] = UInt8(truncatingIfNeeded: length >> (8 * (7 - shift))) }
            headerSize = 10
        }
        let key = nextMaskKey()
        let mask = (
            UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16),
            UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key))
        frame[headerSize] = mask.0
        frame[headerSize + 1] = mask.1
        frame[headerSize + 2] = mask.2
        frame[headerSize + 3] = mask.3
        let body = frame + headerSize + 4
        for position in 0..<length {
            let maskByte: UInt8
            switch position & 3 {
            case 0: maskByte = mask.0
            case 1: maskByte = mask.1
            case 2: maskByte = mask.2
            default: maskByte = mask.3
            }
            body[position] = payload[position] ^ maskByte
        }
        return offset + headerSize + 4 + length
    }

    /// Frames `messageScratch` as one client message and sends it.
    func sendScratchMessage(_ index: Int, opcode: UInt8 = 0x1) {
        let end = messageScratch.withUnsafeBytes { writeFrame(opcode: opcode, payload: $0, at: 0) }
        send(index, UnsafeRawBufferPointer(start: sendScratch, count: end))
    }
}
