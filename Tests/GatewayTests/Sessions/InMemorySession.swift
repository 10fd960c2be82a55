import Auth
import Dispatch
import Glibc
@testable import Gateway
import HTTP1
import Logging
import Primitives
import Store
import Synchronization
import Transport
import WebSocket
import Wire

/// A gateway with an in-memory default namespace and one event loop, for driving wire sessions without sockets.
final class InMemoryGateway: Sendable {
    let gateway: Gateway
    let namespace: Namespace
    let loop: EventLoop
    /// What its sessions are given: the gateway's, with the test's monotonic clock when it gave one.
    let services: SessionServices
    private let group: EventLoopGroup

    init(pacing: ManualNanoseconds? = nil, configure: (inout GatewayConfiguration) -> Void = { _ in }) throws
    {
        var configuration = GatewayConfiguration()
        configure(&configuration)
        gateway = Gateway(
            configuration: configuration,
            tokenVerifier: try TokenVerifier(configuration: AuthConfiguration(listensOnLoopbackOnly: true)),
            logger: Logger(label: "test"))
        namespace = try gateway.namespace(named: configuration.defaultNamespace, mayCreate: true).get()
        if let failure = namespace.store.waitUntilLoaded() { throw failure }
        group = EventLoopGroup(count: 1)
        loop = group.loops[0]
        let shared = gateway.sessionServices
        services = pacing.map { pacing in
            SessionServices(limits: shared.limits, clock: shared.clock, monotonicNanoseconds: pacing.read,
                            metrics: shared.metrics, tokenVerifier: shared.tokenVerifier, appCheck: shared.appCheck,
                            directory: shared.directory, logger: shared.logger, indexes: shared.indexes)
        } ?? shared
    }

    /// Runs `work` on the loop and waits for it.
    func onLoop<T>(_ work: () throws -> T) rethrows -> T {
        try loop.queue.sync(execute: work)
    }

    /// A session on `channel`, owned by the loop, opened.
    func openSession(on channel: any WireChannel) -> WireSession {
        onLoop {
            let session = WireSession(channel: channel, loop: loop, namespace: namespace, services: services,
                                      host: "test", lastSessionID: nil, openedByCrossSitePage: false)
            session.open()
            return session
        }
    }
}

/// A clock a test sets and moves (milliseconds since the Unix epoch): the gateway's, its sessions' and its
/// stores' server time.
final class ManualClock: Sendable {
    private let now: Mutex<Double>
    init(_ start: Double = 1_800_000_000_000) { now = Mutex(start) }
    func read() -> Double { now.withLock { $0 } }
    func advance(milliseconds: Double) { now.withLock { $0 += milliseconds } }
}

/// Monotonic nanoseconds a test sets and moves, for the sessions' pacing.
final class ManualNanoseconds: Sendable {
    private let now = Mutex<UInt64>(1_000_000_000)
    func read() -> UInt64 { now.withLock { $0 } }
    func advance(nanoseconds: UInt64) { now.withLock { $0 += nanoseconds } }
}

/// A ``WireChannel`` that records what the session sends: the test double behind the transport seam.
final class RecordingChannel: WireChannel, @unchecked Sendable {
    private let recorded = Mutex<[String]>([])
    private let events = Mutex<[String]>([])
    private var closedFlag = false
    var transport: WireTransport { .webSocket }
    var isClosed: Bool { closedFlag }
    var pendingOutboundBytes = 0

    var messages: [String] { recorded.withLock { $0 } }
    var channelEvents: [String] { events.withLock { $0 } }

    func send(message: [UInt8]) -> Bool {
        recorded.withLock { $0.append(String(decoding: message, as: UTF8.self)) }
        return true
    }

    func send(sharedFrames: ByteChunk) {
        let payloads = WebSocketFrameEncoder.payloads(ofEncodedFrames: sharedFrames.bytes)
        var assembler = FrameAssembler()
        for payload in payloads {
            if case .message(let message)? = try? assembler.receive(payload) { _ = send(message: message) }
        }
    }

    func flushNow() {}
    func pauseReading() { events.withLock { $0.append("pause") } }
    func resumeReading() { events.withLock { $0.append("resume") } }

    func close(code: UInt16, reason: String) {
        closedFlag = true
        events.withLock { $0.append("close \(code)") }
    }
}

/// A poll's answer recorded instead of sent.
final class RecordedAnswer: PollAnswer {
    private let answer = Mutex<HTTPResponse?>(nil)

    func respond(_ response: HTTPResponse) {
        answer.withLock { $0 = response }
    }

    var response: HTTPResponse? { answer.withLock { $0 } }
    var body: String? { response.map { String(decoding: $0.body, as: UTF8.self) } }
}

/// Waits up to `seconds` for `condition`, checking it every few milliseconds; returns whether it became true.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = DispatchTime.now() + seconds
    while DispatchTime.now() < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// The wire JSON of a client request.
func request(_ number: Int, _ action: String, _ body: String) -> [UInt8] {
    Array(#"{"t":"d","d":{"r":\#(number),"a":"\#(action)","b":\#(body)}}"#.utf8)
}
