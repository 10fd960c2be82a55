// The Swift client's throughput against a running server (issue 18): how many acknowledged writes one client can
// pipeline, and how many events one client can consume, with the same workload as `canopy bench` (64-byte JSON
// objects, a window of unacknowledged writes). benchmarks/swift-client.sh runs it next to `canopy bench`.
//
//   ClientBench writes URL MESSAGES WINDOW    one Database pipelining setValue, WINDOW unacknowledged at most
//   ClientBench events URL MESSAGES WINDOW    a writer Database as above; another Database observes .value and
//                                             counts the events until it saw the last write
//
// Prints one line: `<mode> messages=N seconds=S per_second=R` (events also `events=E`: pushes the server
// coalesced for a slow reader are not counted as events).

import CanopyDatabase
import Dispatch
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 5, let messages = Int(arguments[3]), let window = Int(arguments[4]), messages > 0, window > 0,
      let configuration = DatabaseConfiguration(url: arguments[2])
else {
    FileHandle.standardError.write(Data("usage: ClientBench writes|events URL MESSAGES WINDOW\n".utf8))
    exit(2)
}

/// The padding that makes `{"seq":N,"pad":"…"}` 64 bytes, by the number of digits of N: made once, so that the
/// client's cost is measured rather than the making of the padding (an eighth of a write's CPU when made per write).
let paddings: [String] = (0...20).map { digits in
    String(repeating: "x", count: max(0, 64 - #"{"seq":,"pad":""}"#.utf8.count - digits))
}

/// A 64-byte JSON object carrying its sequence number (a new dictionary each time, as an app would make).
func payload(_ sequence: Int) -> [String: Any] {
    var digits = 1
    var rest = sequence / 10
    while rest > 0 {
        digits += 1
        rest /= 10
    }
    return ["seq": sequence, "pad": paddings[digits]]
}

/// Writes `messages` objects to `path` with at most `window` unacknowledged; returns the seconds it took.
func pipeline(_ database: Database, path: String) -> Double {
    let slots = DispatchSemaphore(value: window)
    let done = DispatchGroup()
    let reference = database.reference(withPath: path)
    let started = DispatchTime.now()
    for sequence in 0..<messages {
        slots.wait()
        done.enter()
        reference.setValue(payload(sequence)) { error, _ in
            if let error {
                FileHandle.standardError.write(Data("write failed: \(error)\n".utf8))
                exit(1)
            }
            slots.signal()
            done.leave()
        }
    }
    done.wait()
    return Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
}

func print(_ mode: String, seconds: Double, extra: String = "") {
    let rate = Double(messages) / seconds
    Swift.print("\(mode) messages=\(messages) seconds=\(String(format: "%.3f", seconds)) "
        + "per_second=\(Int(rate))\(extra)")
}

/// Counts the `.value` events after the first and signals when the last write's value arrived. The observer's
/// block runs on the database's callback queue, so the count lives here, not in a top-level variable (which Swift 6
/// isolates to the main actor).
final class EventCounter: @unchecked Sendable {  // touched only on the callback queue, read after `finished`
    let ready = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    private(set) var events = 0
    private var firstSeen = false
    let last: Int

    init(last: Int) {
        self.last = last
    }

    func seen(_ snapshot: DataSnapshot) {
        guard firstSeen else {
            firstSeen = true
            ready.signal()
            return
        }
        events += 1
        if ((snapshot.value as? [String: Any])?["seq"] as? NSNumber)?.intValue == last { finished.signal() }
    }
}

/// One writer pipelines, another database observes; returns the seconds from the first write to the last event,
/// and the events counted.
func measureEvents() -> (seconds: Double, events: Int) {
    let writer = Database(configuration: configuration)
    let observer = Database(configuration: configuration)
    let counter = EventCounter(last: messages - 1)
    observer.reference(withPath: "client-bench/events").observe(.value, with: counter.seen)
    counter.ready.wait()
    let started = DispatchTime.now()
    _ = pipeline(writer, path: "client-bench/events")
    counter.finished.wait()
    return (Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9, counter.events)
}

switch arguments[1] {
case "writes":
    let writer = Database(configuration: configuration)
    _ = pipeline(writer, path: "client-bench/warmup")
    print("writes", seconds: pipeline(writer, path: "client-bench/writes"))
case "events":
    let (seconds, events) = measureEvents()
    print("events", seconds: seconds, extra: " events=\(events)")
default:
    FileHandle.standardError.write(Data("unknown mode \(arguments[1])\n".utf8))
    exit(2)
}
