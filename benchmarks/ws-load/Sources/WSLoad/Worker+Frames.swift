import Glibc

/// Server frames are scanned, not parsed: the scanner reads headers, skips payloads in bulk, and looks into a
/// payload only for control frames, for the sender tag on sender connections, and in the Firebase modes for the
/// messages themselves — in place when a whole message is in one read, else gathered in `Connection.message`.
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
                if connection.pointee.tagBytesWanted > 0 {
                    captureTag(connection, base + position, take)
                }
                if connection.pointee.opcode >= 8 {
                    let bytes = UnsafeBufferPointer(start: base + position, count: take)
                    connection.pointee.control.append(contentsOf: bytes)
                } else if connection.pointee.capturing {
                    let bytes = UnsafeBufferPointer(start: base + position, count: take)
                    if take == connection.pointee.payloadRemaining,
                        connection.pointee.payloadRemaining == connection.pointee.frameLength,
                        connection.pointee.fin, connection.pointee.message.isEmpty
                    {
                        guard firebaseFrame(index, bytes) else { return false }
                    } else {
                        connection.pointee.message.append(contentsOf: bytes)
                    }
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
        guard first & 0x70 == 0 else {
            drop(index, reason: "protocol error: reserved bits set (no extension was negotiated)")
            return false
        }
        var length = Int(second & 0x7F)
        if length == 126 {
            length = Int(header[2]) << 8 | Int(header[3])
        } else if length == 127 {
            var wide: UInt64 = 0
            for offset in 2..<10 { wide = wide << 8 | UInt64(header[offset]) }
            guard wide <= 1 << 31 else {
                drop(index, reason: "protocol error: frame length \(wide) too large")
                return false
            }
            length = Int(wide)
        }
        let connection = connections + index
        let opcode = first & 0x0F
        connection.pointee.opcode = opcode
        connection.pointee.fin = first & 0x80 != 0
        if opcode >= 8 {
            guard length <= 125, connection.pointee.fin else {
                drop(index, reason: "protocol error: control frame too long or fragmented")
                return false
            }
            connection.pointee.control.removeAll(keepingCapacity: true)
        } else if plan != nil {
            connection.pointee.capturing = true
        } else if opcode != 0, connection.pointee.isSender, options.senders > 1 {
            connection.pointee.tagBytesWanted = SenderTag.length
            connection.pointee.tagAccumulator = 0
        }
        connection.pointee.frameLength = length
        connection.pointee.payloadRemaining = length
        return length > 0 || frameEnded(index)
    }

    @inline(__always)
    private func captureTag(
        _ connection: UnsafeMutablePointer<Connection>, _ bytes: UnsafePointer<UInt8>, _ count: Int
    ) {
        let taken = min(connection.pointee.tagBytesWanted, count)
        for offset in 0..<taken {
            connection.pointee.tagAccumulator = connection.pointee.tagAccumulator << 8 | UInt64(bytes[offset])
        }
        connection.pointee.tagBytesWanted -= taken
    }

    /// Acts on a frame whose payload has been seen; returns false when the connection was dropped.
    private func frameEnded(_ index: Int) -> Bool {
        let connection = connections + index
        switch connection.pointee.opcode {
        case 0, 1, 2:
            if plan != nil {
                connection.pointee.capturing = false
                if connection.pointee.fin, !connection.pointee.message.isEmpty {
                    return firebaseGatheredFrame(index)
                }
            } else if connection.pointee.fin {
                connection.pointee.messagesReceived += 1
                result.received += 1
                messageArrived(index)
            }
        case 9:
            let payload = connection.pointee.control
            let end = payload.withUnsafeBytes { writeFrame(opcode: 0xA, payload: $0, tag: nil, at: 0) }
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

    /// Writes one masked client frame (RFC 6455 §5.3) into `sendScratch` at `offset`; returns the offset after it.
    ///
    /// When `tag` is given it replaces the payload's first `SenderTag.length` bytes. The caller guarantees room.
    func writeFrame(opcode: UInt8, payload: UnsafeRawBufferPointer, tag: UInt64?, at offset: Int) -> Int {
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
            var byte = payload[position]
            if let tag, position < SenderTag.length {
                byte = UInt8(truncatingIfNeeded: tag >> (8 * UInt64(SenderTag.length - 1 - position)))
            }
            let maskByte: UInt8
            switch position & 3 {
            case 0: maskByte = mask.0
            case 1: maskByte = mask.1
            case 2: maskByte = mask.2
            default: maskByte = mask.3
            }
            body[position] = byte ^ maskByte
        }
        return offset + headerSize + 4 + length
    }
}
