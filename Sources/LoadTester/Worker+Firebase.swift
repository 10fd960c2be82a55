import Glibc
import Primitives

/// The Firebase wire protocol on a connection (wire-protocol.md §2–§6, §11): reassembling split messages, the
/// hello, auth and the listen with their `ok`, acknowledgements of writes, and the pushes subscribers count.
extension Worker {
    /// Receive buffer of the stalled subscriber's socket, small so that the server feels its stall quickly.
    static let stalledReceiveBuffer: Int32 = 4096

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
        let room = connections[index].room
        if connections[index].ready, connections[index].role == .subscriber || connections[index].role == .stalled,
            !plan.pushPrefixes[room].isEmpty,
            let value = plan.pushPrefixes[room].withUnsafeBufferPointer({
                BenchPush.value(bytes, prefix: $0, closers: 3)
            })
        {
            deliver(index, value)
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
        case .shutdown(let reason):
            drop(index, reason: "the server refused the connection: " + String(decoding: bytes[reason], as: UTF8.self))
            return false
        case .otherPush:
            if connections[index].ready { result.unexpectedPushes += 1 }
        case .malformed:
            let text = String(decoding: bytes.prefix(120), as: UTF8.self)
            drop(index, reason: "cannot follow the server message \(text)")
            return false
        }
        return connections[index].state == .open
    }

    /// The request number of the listen (1, or 2 after an `auth`).
    private var listenRequest: Int64 { configuration.authToken == nil ? 1 : 2 }

    private func helloArrived(_ index: Int) {
        guard !connections[index].helloSeen else { return }
        connections[index].helloSeen = true
        connections[index].nextRequest = listenRequest
        if let token = configuration.authToken {
            sendAuth(index, token: token)
        } else if connections[index].role == .writer {
            markReady(index)
        } else {
            sendListen(index)
        }
    }

    private func responseArrived(_ index: Int, request: Int64, ok: Bool, status: @autoclosure () -> String) {
        if !connections[index].ready {
            let authAnswer = configuration.authToken != nil && request == 1
            guard authAnswer || request == listenRequest else { return }
            guard ok else {
                drop(index, reason: "\(authAnswer ? "auth" : "listen") answered \(status())")
                return
            }
            if authAnswer, connections[index].role != .writer {
                sendListen(index)
            } else {
                markReady(index)
            }
            return
        }
        guard connections[index].role == .writer else { return }
        connections[index].acknowledged += 1
        result.lastAck = readTime
        if ok {
            result.acks += 1
            interval.acks += 1
            let slot = connections[index].writerSlot &* sendTimeRing
                &+ Int(truncatingIfNeeded: request) & (sendTimeRing - 1)
            interval.writeLatency.record(nanoseconds: readTime &- sendTimes[slot])
        } else {
            result.rejectedWrites += 1
            noteError("write \(request) answered \(status())")
        }
    }

    /// Counts the updates of a push to a ready subscriber: a whole update at its path or below (`d`), or a merge
    /// whose members are updates (counted) or `null` (children that left a query window).
    private func pushArrived(
        _ index: Int, _ bytes: UnsafeBufferPointer<UInt8>, merge: Bool, path: Range<Int>, data: Int
    ) {
        guard connections[index].ready, connections[index].role == .subscriber || connections[index].role == .stalled
        else { return }
        let listened = plan.listenPaths[connections[index].room]
        guard let relation = FirebaseMessage.relation(of: bytes, path, to: listened) else {
            result.unexpectedPushes += 1
            return
        }
        if !merge {
            if let value = BenchValue(bytes, objectAt: data) {
                deliver(index, value)
            } else if relation == .below, JSONScan.isNull(bytes, at: data) {
                result.evictions += 1
            } else {
                result.unexpectedPushes += 1
            }
            return
        }
        var members = MemberCursor(bytes, objectAt: data)
        var any = false
        while let member = members.next() {
            any = true
            if let value = BenchValue(bytes, objectAt: member.value) {
                deliver(index, value)
            } else if JSONScan.isNull(bytes, at: member.value) {
                result.evictions += 1
            } else {
                result.unexpectedPushes += 1
            }
        }
        if !any { result.unexpectedPushes += 1 }
    }

    /// Sends `auth` (a JWT: an ID token or an emulator token) or `gauth` (anything else, such as `owner`) with the
    /// credential (§6.2), as request 1.
    private func sendAuth(_ index: Int, token: String) {
        let action = token.utf8.count(where: { $0 == UInt8(ascii: ".") }) == 2 ? "auth" : "gauth"
        messageScratch.removeAll(keepingCapacity: true)
        messageScratch.append(contentsOf: #"{"t":"d","d":{"r":1,"a":""#.utf8)
        messageScratch.append(contentsOf: action.utf8)
        messageScratch.append(contentsOf: #"","b":{"cred":""#.utf8)
        appendEscaped(token, to: &messageScratch)
        messageScratch.append(contentsOf: #""}}}"#.utf8)
        sendScratchMessage(index)
    }

    /// Sends the listen (§6.5): a default listen on the room's path, the connection's own path (connections), or
    /// with `orderByChild(orderBy).limitToLast(limit)` as tag 1 (query).
    private func sendListen(_ index: Int) {
        messageScratch.removeAll(keepingCapacity: true)
        messageScratch.append(contentsOf: #"{"t":"d","d":{"r":"#.utf8)
        ASCIIBytes.appendDecimal(UInt64(listenRequest), to: &messageScratch)
        messageScratch.append(contentsOf: #","a":"q","b":{"p":""#.utf8)
        messageScratch.append(contentsOf: plan.listenPaths[connections[index].room])
        if plan.scenario == .connections, !configuration.sharedPath {
            messageScratch.append(contentsOf: "/c".utf8)
            ASCIIBytes.appendDecimal(UInt64(connections[index].global), to: &messageScratch)
        }
        messageScratch.append(UInt8(ascii: "\""))
        if plan.scenario == .query {
            messageScratch.append(contentsOf: #","q":{"i":""#.utf8)
            messageScratch.append(contentsOf: configuration.orderBy.utf8)
            messageScratch.append(contentsOf: #"","l":"#.utf8)
            ASCIIBytes.appendDecimal(UInt64(configuration.limit), to: &messageScratch)
            messageScratch.append(contentsOf: #","vf":"r"},"t":1"#.utf8)
        }
        messageScratch.append(contentsOf: #","h":""}}}"#.utf8)
        sendScratchMessage(index)
    }
}

/// Appends `text` as the inside of a JSON string (RFC 8259 §7): quotes, backslashes and control characters escaped.
func appendEscaped(_ text: String, to bytes: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"):
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(byte)
        case 0..<0x20:
            bytes.append(contentsOf: #"\u00"#.utf8)
            bytes.append(hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        default:
            bytes.append(byte)
        }
    }
}
