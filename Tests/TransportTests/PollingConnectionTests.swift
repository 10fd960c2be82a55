import Foundation
import Synchronization
import TestSupport
import Testing
import Transport

#if canImport(Glibc)
import Glibc
#endif

/// What a test handler saw, readable from the test's thread.
final class HandlerLog: Sendable {
    private let state = Mutex<(bytes: Int, closes: [String])>((0, []))

    func addBytes(_ count: Int) { state.withLock { $0.bytes += count } }
    func addClose(_ reason: CloseReason) { state.withLock { $0.closes.append(reason.description) } }
    var bytes: Int { state.withLock { $0.bytes } }
    var closes: [String] { state.withLock { $0.closes } }
}

/// A value shared between a test and the loops.
final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    init(_ value: Value) { state = Mutex(value) }
    var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// Echoes what it reads, or — with `pauseOnAccept` — reads nothing at all.
final class EchoHandler: ConnectionHandler {
    let log: HandlerLog
    init(log: HandlerLog) { self.log = log }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        log.addBytes(bytes.count)
        connection.write(Array(bytes))
    }

    func connectionDidClose(_ connection: Connection, reason: CloseReason) { log.addClose(reason) }
}

/// Sends `total` bytes (a counting pattern) as soon as the connection opens, then closes after flushing.
final class SenderHandler: ConnectionHandler {
    let log: HandlerLog
    let total: Int
    init(log: HandlerLog, total: Int) {
        self.log = log
        self.total = total
    }

    func start(_ connection: Connection) {
        var sent = 0
        while sent < total {
            let count = min(64 * 1024, total - sent)
            connection.write((sent..<(sent + count)).map { UInt8(truncatingIfNeeded: $0) })
            sent += count
        }
        connection.closeAfterFlush(reason: .local("done"), lingerNanoseconds: 30_000_000_000)
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) { log.addBytes(bytes.count) }
    func connectionDidClose(_ connection: Connection, reason: CloseReason) { log.addClose(reason) }
}

/// A listener on an ephemeral loopback port whose connections get handlers from `makeHandler`.
final class TestListener {
    let group: EventLoopGroup
    let listener: Listener
    var port: UInt16 { listener.boundAddress.port }

    init(
        loops: Int = 2, limits: OutboundLimits = OutboundLimits(),
        setUp: @escaping @Sendable (Connection) -> Void
    ) throws {
        group = EventLoopGroup(count: loops)
        let policy = ConnectionPolicy(limits: limits)
        listener = try Listener(address: SocketAddress(host: "127.0.0.1", port: 0), group: group) { connection in
            connection.policy = policy
            setUp(connection)
        }
        listener.start()
    }

    deinit { listener.stop() }
}

/// Waits up to `seconds` for `condition`.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

@Suite("Connections on the epoll poller", .serialized)
struct PollingConnectionTests {
    @Test("bytes are echoed on many connections at once, over both loops")
    func echoOnManyConnections() throws {
        let log = HandlerLog()
        let server = try TestListener { $0.handler = EchoHandler(log: log) }
        let clients = try (0..<50).map { _ in try RawClient(port: server.port) }
        for (index, client) in clients.enumerated() { try client.send("hello \(index)") }
        for (index, client) in clients.enumerated() {
            let expected = Array("hello \(index)".utf8)
            #expect(try client.read(count: expected.count) == expected)
        }
        #expect(log.bytes == clients.indices.reduce(0) { $0 + "hello \($1)".utf8.count })
    }

    @Test("descriptors reused by new connections right after closes reach the new connection only")
    func descriptorReuse() throws {
        let log = HandlerLog()
        let server = try TestListener(loops: 1) { $0.handler = EchoHandler(log: log) }
        for round in 0..<200 {
            let client = try RawClient(port: server.port)
            let message = Array("round \(round)".utf8)
            try client.send(message)
            #expect(try client.read(count: message.count) == message)
            // Closed by the peer; the server's descriptor number is free for the next round's accept.
        }
        #expect(eventually { log.closes.count == 200 })
        #expect(log.closes.allSatisfy { $0 == CloseReason.peerClosed.description })
    }

    @Test("output larger than the socket buffers waits for writability and arrives whole and in order")
    func outputWaitsForWritability() throws {
        let log = HandlerLog()
        let total = 16 * 1024 * 1024
        let limits = OutboundLimits(lowWaterMark: 1 << 20, highWaterMark: 1 << 22, hardLimit: 1 << 26)
        let server = try TestListener(limits: limits) { connection in
            let handler = SenderHandler(log: log, total: total)
            connection.handler = handler
            handler.start(connection)
        }
        let client = try RawClient(port: server.port)
        usleep(200_000)  // let the server fill the socket buffers and wait for writability
        var received = 0
        var inOrder = true
        while received < total {
            let chunk = try client.readSome()
            if chunk.isEmpty { break }
            for (offset, byte) in chunk.enumerated() where byte != UInt8(truncatingIfNeeded: received + offset) {
                inOrder = false
            }
            received += chunk.count
        }
        #expect(received == total)
        #expect(inOrder)
        #expect(client.waitForClose())
        #expect(eventually { log.closes == ["done"] })
    }

    @Test("a reset arriving while reading is paused closes the connection instead of being reported forever")
    func resetWhilePaused() throws {
        let log = HandlerLog()
        let paused = Shared<Connection?>(nil)
        let server = try TestListener(loops: 1) { connection in
            connection.handler = EchoHandler(log: log)
            connection.pauseReading()
            paused.value = connection
        }
        do {
            let client = try RawClient(port: server.port)
            try client.send("unread")
            #expect(eventually { paused.value != nil })
            var linger = linger(l_onoff: 1, l_linger: 0)
            setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
        }  // the client's close sends a reset (linger 0, unread data)
        #expect(eventually { log.closes.count == 1 }, "a hung-up socket that is not read must be closed")
        #expect(log.bytes == 0, "reading stayed paused")
    }

    @Test("dropping an event-loop group releases its loops (their poller threads hold them weakly and stop)")
    func loopsAreReleased() throws {
        weak var firstLoop: EventLoop?
        do {
            let group = EventLoopGroup(count: 3)
            firstLoop = group.loops[0]
            let ran = Shared(false)
            group.loops[0].execute { ran.value = true }
            #expect(eventually { ran.value })
        }
        #expect(eventually { firstLoop == nil })
    }
}
