import DataModel
import Dispatch
import Rules
import Synchronization

/// Rule evaluations as they happen, for the console's live requests view (`/.inspect/evaluations`).
///
/// Off unless someone watches: then nothing is recorded, and rules are evaluated without traces as before. While
/// watched, each evaluation (allowed and denied) is encoded once, with the trace of every rule tried and the
/// rule's line, and sent to every watcher as a server-sent event; at most ``maxPerSecond`` a second are kept (the
/// others are counted as skipped and reported with the next one), and the last ``kept`` are replayed to a new
/// watcher.
///
/// The data plane publishes into it; the control plane's `/.inspect/evaluations` watches it.
public final class EvaluationFeed: Sendable {
    static let maxPerSecond = 200
    static let kept = 200

    private struct State {
        var recent: [[UInt8]] = []
        var watchers: [Int: @Sendable ([UInt8]) -> Void] = [:]
        var nextID = 0
        var windowStart = 0.0
        var inWindow = 0
        var skipped = 0
    }

    private let watching = Atomic<Int>(0)
    private let state = Mutex(State())

    /// Whether a console watches (rules then evaluate with traces).
    var isWatched: Bool { watching.load(ordering: .relaxed) > 0 }

    /// Adds a watcher: it gets the recent evaluations at once, then each new one (on the publisher's thread; hop
    /// to your own queue). Returns its id for ``unwatch(_:)``.
    public func watch(_ deliver: @escaping @Sendable ([UInt8]) -> Void) -> Int {
        let (id, recent) = state.withLock { state in
            state.nextID += 1
            state.watchers[state.nextID] = deliver
            return (state.nextID, state.recent)
        }
        watching.add(1, ordering: .relaxed)
        for event in recent { deliver(event) }
        return id
    }

    /// Removes the watcher with `id`; evaluations stop being recorded once none is left.
    public func unwatch(_ id: Int) {
        let removed = state.withLock { $0.watchers.removeValue(forKey: id) != nil }
        if removed { watching.subtract(1, ordering: .relaxed) }
    }

    /// Records one evaluation (call only while ``isWatched``).
    func publish(namespace: String?, operation: String, path: Path, auth: JSONValue?, decision: RulesDecision,
                 time: Double)
    {
        let (deliveries, skipped) = state.withLock { state -> ([@Sendable ([UInt8]) -> Void], Int?) in
            if time - state.windowStart >= 1000 {
                state.windowStart = time
                state.inWindow = 0
            }
            guard state.inWindow < Self.maxPerSecond else {
                state.skipped += 1
                return ([], nil)
            }
            state.inWindow += 1
            defer { state.skipped = 0 }
            return (Array(state.watchers.values), state.skipped)
        }
        guard let skipped else { return }
        let event = Self.encode(namespace: namespace, operation: operation, path: path, auth: auth,
                                decision: decision, time: time, skipped: skipped)
        state.withLock { state in
            state.recent.append(event)
            if state.recent.count > Self.kept { state.recent.removeFirst(state.recent.count - Self.kept) }
        }
        for deliver in deliveries { deliver(event) }
    }

    /// `data: {"time", "namespace", "operation", "path", "auth", "allowed", "skipped", "trace": [...]}` and a blank
    /// line: one server-sent event.
    static func encode(namespace: String?, operation: String, path: Path, auth: JSONValue?, decision: RulesDecision,
                       time: Double, skipped: Int) -> [UInt8]
    {
        var writer = JSONWriter(capacity: 256)
        writer.writeRaw("data: ".utf8)
        writer.writeRaw(#"{"time":"#.utf8)
        writer.writeNumber(time)
        writer.writeRaw(#","namespace":"#.utf8)
        if let namespace { writer.writeString(namespace) } else { writer.writeRaw("null".utf8) }
        writer.writeRaw(#","operation":"#.utf8)
        writer.writeString(operation)
        writer.writeRaw(#","path":"#.utf8)
        writer.writeString(path.description)
        writer.writeRaw(#","auth":"#.utf8)
        writer.write(auth ?? .null)
        writer.writeRaw(#","allowed":"#.utf8)
        writer.writeRaw((decision.allowed ? "true" : "false").utf8)
        writer.writeRaw(#","skipped":"#.utf8)
        writer.writeNumber(Double(skipped))
        writer.writeRaw(#","trace":["#.utf8)
        for (index, evaluation) in decision.trace.enumerated() {
            if index > 0 { writer.writeRaw(",".utf8) }
            evaluation.write(into: &writer)
        }
        writer.writeRaw("]}\n\n".utf8)
        return writer.bytes
    }
}
