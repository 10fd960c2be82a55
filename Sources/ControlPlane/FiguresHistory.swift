import DataModel
import Dispatch
import Gateway
import Synchronization

/// The server's figures of the last minutes, one sample a second, for the console's charts
/// (`/.inspect/figures.json`): connections, listens, views, and the rates of writes, deliveries, bytes out and
/// slow consumers dropped. Sampling reads the gateway's counters only (``Gateway/figures``); it costs nothing on the
/// hot paths.
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

    private let state = Mutex<(samples: [Sample], last: GatewayFigures?)>(([], nil))
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
        let now = gateway.figures
        let time = gateway.configuration.clock()
        state.withLock { state in
            defer { state.last = now }
            guard let last = state.last else { return }
            state.samples.append(Sample(
                time: time, connections: now.connections, listens: now.listens, views: now.views,
                writesPerSecond: now.writes &- last.writes, deliveriesPerSecond: now.deliveries &- last.deliveries,
                bytesOutPerSecond: now.bytesWritten &- last.bytesWritten,
                slowConsumersDropped: now.slowConsumersDropped &- last.slowConsumersDropped))
            if state.samples.count > Self.kept { state.samples.removeFirst(state.samples.count - Self.kept) }
        }
    }

    /// `{"intervalSeconds": 1, "samples": [{"time", "connections", "listens", "views", "writesPerSecond",
    /// "deliveriesPerSecond", "bytesOutPerSecond", "slowConsumersDropped"}]}`, oldest first.
    func json() -> [UInt8] {
        var writer = JSONWriter(capacity: 4096)
        writer.writeRaw(#"{"intervalSeconds":1,"samples":["#.utf8)
        for (index, sample) in samples.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            let fields: [(String, Double)] = [
                ("time", sample.time), ("connections", Double(sample.connections)),
                ("listens", Double(sample.listens)), ("views", Double(sample.views)),
                ("writesPerSecond", Double(sample.writesPerSecond)),
                ("deliveriesPerSecond", Double(sample.deliveriesPerSecond)),
                ("bytesOutPerSecond", Double(sample.bytesOutPerSecond)),
                ("slowConsumersDropped", Double(sample.slowConsumersDropped)),
            ]
            writer.writeRaw("{".utf8)
            for (position, field) in fields.enumerated() {
                if position > 0 { writer.writeRaw(",".utf8) }
                writer.writeString(field.0)
                writer.writeRaw(":".utf8)
                writer.writeNumber(field.1)
            }
            writer.writeRaw("}".utf8)
        }
        writer.writeRaw("]}".utf8)
        return writer.bytes
    }
}
