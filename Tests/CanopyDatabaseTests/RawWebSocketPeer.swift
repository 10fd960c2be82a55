import Dispatch
import Synchronization
import WebSocket
import Wire
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A bare WebSocket server on a loopback port for one client: it completes the upgrade, sends the protocol's hello,
/// then records every text message the client sends, with the time it arrived. It answers nothing else, so a test
/// sees exactly what the client sent on its own (the real server swallows keepalives before anything can count them).
final class RawWebSocketPeer: @unchecked Sendable {  // `received` and `stopping` are guarded by mutexes
    /// A text message from the client, with its arrival in uptime nanoseconds.
    struct Message {
        let text: String
        let arrived: UInt64
    }

    private(set) var port: UInt16 = 0
    private let listener: Int32
    private let received = Mutex<[Message]>([])
    private let stopping = Mutex(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Listens on 127.0.0.1 on a free port and serves the first client in the background.
    init() throws(PeerError) {
        listener = socket(AF_INET, Self.streamType, 0)
        guard listener >= 0 else { throw PeerError(call: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 1) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else {
            Self.close(listener)
            throw PeerError(call: "bind")
        }
        port = UInt16(bigEndian: address.sin_port)
        DispatchQueue.global().async { [self] in
            serve()
            finished.signal()
        }
    }

    /// What the client sent so far.
    var messages: [Message] { received.withLock { $0 } }

    /// Stops serving and closes the sockets (waits for the serving thread).
    func stop() {
        stopping.withLock { $0 = true }
        finished.wait()
        Self.close(listener)
    }

    // MARK: - Serving

    private var isStopping: Bool { stopping.withLock { $0 } }

    /// Waits up to 100 ms for `descriptor` to be readable.
    private static func readable(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 100) > 0
    }

    private func serve() {
        var client: Int32 = -1
        while client < 0, !isStopping {
            if Self.readable(listener) { client = accept(listener, nil, nil) }
        }
        guard client >= 0 else { return }
        defer { Self.close(client) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var head: [UInt8] = []
        var machine = WebSocketConnectionStateMachine(role: .server)
        var upgraded = false
        while !isStopping {
            guard Self.readable(client) else { continue }
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            let arrived = DispatchTime.now().uptimeNanoseconds
            guard upgraded else {
                head.append(contentsOf: buffer[..<count])
                guard let end = WebSocketClientHandshake.responseHeadEnd(in: head, searchingFrom: 0) else { continue }
                guard answerUpgrade(head[..<end], on: client) else { return }
                upgraded = true
                head.removeFirst(end)
                guard !head.isEmpty else { continue }
                record(head.withUnsafeBytes { machine.bytesReceived($0) }, arrived: arrived)
                continue
            }
            record(buffer.withUnsafeBytes { machine.bytesReceived(UnsafeRawBufferPointer(rebasing: $0[..<count])) },
                   arrived: arrived)
        }
    }

    /// Accepts the upgrade and sends the hello; `false` when the request has no key or the client went away.
    private func answerUpgrade(_ request: ArraySlice<UInt8>, on client: Int32) -> Bool {
        let lines = String(decoding: request, as: UTF8.self).split(separator: "\r\n")
        guard let keyLine = lines.first(where: { $0.lowercased().hasPrefix("sec-websocket-key:") }) else { return false }
        let key = keyLine.dropFirst("sec-websocket-key:".count).trimmingPrefix(" ")
        let response = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(forKey: String(key)))\r\n\r\n"
        let hello = ServerMessage.handshake(Handshake(timestamp: 0, host: "127.0.0.1", sessionID: "raw")).encoded()
        let bytes = Array(response.utf8) + WebSocketFrameEncoder.encode(opcode: .text, payload: hello)
        return bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) } == bytes.count
    }

    private func record(_ actions: [WebSocketConnectionStateMachine.Action], arrived: UInt64) {
        for case .message(.text(let text)) in actions {
            received.withLock { $0.append(Message(text: String(decoding: text, as: UTF8.self), arrived: arrived)) }
        }
    }

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    private static let streamType = SOCK_STREAM
    #endif

    private static func close(_ descriptor: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}

/// A system call of ``RawWebSocketPeer`` failed.
struct PeerError: Error {
    let call: String
}
