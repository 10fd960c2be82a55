import Dispatch
import HTTPServer
import Synchronization
import Transport

/// The server's figures of the last minutes, one sample a second, for the console's charts
/// (`/.inspect/figures.json`): connections, listens, views, and the rates of writes, deliveries, bytes out and
/// slow consumers dropped. Sampling reads counters only; it costs nothing on the hot paths.
final class FiguresHistory: Sendable {
    /// One second's figures.
    struct Sample: Sendable {
        let time: Double
        let connections: Int
        let listens: Int
        let views: Int
        let writesPerSecond: UInt64
        let deliveriesPerSecond: UInt64
        let bytesOutPerSecond: UInt64
        let slowConsumersDropped: UInt64
    }

    /// Samples kept: five minutes.
    static let kept = 300

    private struct Totals {
        var writes: UInt64 = 0
        var deliveries: UInt64 = 0
        var bytesOut: UInt64 = 0
        var slowConsumers: UInt64 = 0
    }

    private let state = Mutex<(samples: [Sample], last: Totals?)>(([], nil))
    private let timer = Mutex(TimerBox())

    /// The sampling timer (Dispatch sources are thread-safe; the box only lets the mutex hold one).
    private struct TimerBox: @unchecked Sendable {
        var source: (any DispatchSourceTimer)?
    }

    /// Samples `gateway` every second until ``stop()`` (the first sample covers the first second).
    func start(_ gateway: Gateway) {
        record(gateway)
        let source = DispatchSource.makeTimerSource(queue: .global())
        source.schedule(deadline: .now() + 1, repeating: 1)
        source.setEventHandler { [weak self, weak gateway] in
            guard let self, let gateway else { return }
            self.record(gateway)
        }
        source.resume()
        let previous = timer.withLock { box in
            defer { box.source = source }
            return box
        }
        previous.source?.cancel()
    }

    func stop() {
        let running = timer.withLock { box in
            defer { box.source = nil }
            return box
        }
        running.source?.cancel()
    }

    var samples: [Sample] { state.withLock { $0.samples } }

    private func record(_ gateway: Gateway) {
        let transport = gateway.transportFigures
        let totals = Totals(writes: gateway.metrics.writeCount.load, deliveries: gateway.metrics.deliveryCount.load,
                            bytesOut: transport?.bytesWritten ?? 0, slowConsumers: transport?.slowConsumers ?? 0)
        let live = (connections: transport?.liveConnections ?? gateway.sessions.count,
                    listens: gateway.sessions.listenCount, views: gateway.viewCount)
        let time = gateway.configuration.clock()
        state.withLock { state in
            defer { state.last = totals }
            guard let last = state.last else { return }
            state.samples.append(Sample(
                time: time, connections: live.connections, listens: live.listens, views: live.views,
                writesPerSecond: totals.writes &- last.writes, deliveriesPerSecond: totals.deliveries &- last.deliveries,
                bytesOutPerSecond: totals.bytesOut &- last.bytesOut,
                slowConsumersDropped: totals.slowConsumers &- last.slowConsumers))
            if state.samples.count > Self.kept { state.samples.removeFirst(state.samples.count - Self.kept) }
        }
    }
}
