/// The workload a run drives.
enum LoadMode: String, Sendable {
    /// Each connection keeps one message in flight; measures round trips per second and latency.
    case echo
    /// Senders publish messages that the server fans out to every connection; measures deliveries per second.
    case broadcast
    /// Opens connections and holds them; used to read the server's memory per connection.
    case idle
    /// Firebase protocol: subscribers listen to one path; writers put updates to it; measures fan-out.
    case fanout
    /// Firebase protocol: subscribers spread over several paths (rooms); writers spread over the rooms.
    case rooms

    /// Whether the mode speaks the Firebase wire protocol (`/.ws?v=5`) rather than raw WebSocket messages.
    var isFirebase: Bool { self == .fanout || self == .rooms }
}

/// Command-line options of `ws-load`.
struct LoadOptions: Sendable {
    static let usage = """
        usage: ws-load echo      --port N [--connections 100] [--duration 10] [--payload 64]
               ws-load broadcast --port N [--connections 1000] [--messages 1000] [--payload 64] [--senders 1] [--window 32]
               ws-load idle      --port N [--connections 10000] [--hold 10]
               ws-load fanout    --port N [--subscribers 1000] [--writers 1] [--messages 1000] [--payload 64]
                                 [--window 32 | --rate UPDATES_PER_S [--duration S]] [--stall-seconds S]
               ws-load rooms     --port N [--rooms 100] [--subscribers 100] [--writers 1] (fanout's other options)
        common: [--host 127.0.0.1] [--path P] [--threads 1] [--connect-window 256] [--timeout 120] [--stall 10] [--binary]
                [--server-pid PID]
        firebase: [--ns bench] [--stall-after 1] [--metrics-url http://HOST:PORT/.metrics] [--timeline]
        --messages is the total over all senders; every connection should receive each of them once.
        --window bounds each sender's messages in flight (sent but not yet received back on its own connection).
        --path defaults to /echo for echo and idle, /broadcast for broadcast, /.ws?v=5&ns=NS for fanout and rooms.
        --server-pid: also report the server's CPU time during the workload (from /proc/PID/stat), and for fanout
            and rooms its VmRSS (from /proc/PID/status).
        fanout and rooms speak the Firebase wire protocol: subscribers listen to /bench/room<i>, writers put
        --payload-byte JSON objects carrying a sequence number and the send time; --subscribers is per room in
        rooms mode. --window bounds each writer's puts awaiting their ack; --rate sends UPDATES_PER_S puts per
        second over all writers instead (then --duration, if given, sets --messages to rate × duration).
        --stall-seconds S: one extra subscriber of room 0 stops reading S seconds, --stall-after seconds into the
            run; it must stay connected and end with the room's latest value; it is left out of loss and latency.
        --metrics-url: print the deltas of the server's push-frame counters (Prometheus text) over the run.
        --timeline: print, per second of the run, the deliveries, the slowest one and those slower than 10 ms.
        """

    /// A command-line error.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    var mode: LoadMode
    var host = "127.0.0.1"
    var port = 0
    var path: String
    var connections: Int
    var threads = 1
    /// Connections allowed between `connect` and a completed upgrade, over all threads.
    var connectWindow = 256
    /// Echo: seconds to measure.
    var duration = 10.0
    /// Idle: seconds to hold the connections open after all are open.
    var hold = 10.0
    /// Broadcast: messages in total over all senders.
    var messages = 1000
    var payload = 64
    var senders = 1
    var window = 32
    /// Seconds the whole run may take before it is abandoned as failed.
    var timeout = 120.0
    /// Broadcast: seconds without any delivery after which the remaining messages count as lost.
    var stall = 10.0
    /// Send binary frames instead of text (the payload is ASCII either way).
    var binary = false
    /// The server's process, whose CPU time over the workload is reported when given.
    var serverPID: Int?
    /// Firebase modes: the settings only they use.
    var firebase = FirebaseOptions()

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        guard let modeName = remaining.popFirst(), let mode = LoadMode(rawValue: modeName) else {
            throw UsageError(description: "the first argument must be echo, broadcast or idle")
        }
        self.mode = mode
        switch mode {
        case .echo:
            path = "/echo"
            connections = 100
        case .broadcast:
            path = "/broadcast"
            connections = 1000
        case .idle:
            path = "/echo"
            connections = 10000
        case .fanout, .rooms:
            path = ""
            connections = 0
        }
        var durationGiven = false
        var pathGiven = false
        var portGiven = false
        while let flag = remaining.popFirst() {
            switch flag {
            case "--host": host = try Self.value(after: flag, in: &remaining)
            case "--port":
                port = try Self.integer(after: flag, in: &remaining, range: 1...65535)
                portGiven = true
            case "--path":
                path = try Self.value(after: flag, in: &remaining)
                pathGiven = true
            case "--connections": connections = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000)
            case "--threads": threads = try Self.integer(after: flag, in: &remaining, range: 1...64)
            case "--connect-window": connectWindow = try Self.integer(after: flag, in: &remaining, range: 1...100_000)
            case "--duration":
                duration = try Self.seconds(after: flag, in: &remaining)
                durationGiven = true
            case "--hold": hold = try Self.seconds(after: flag, in: &remaining)
            case "--messages": messages = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000_000)
            case "--payload": payload = try Self.integer(after: flag, in: &remaining, range: 0...65535)
            case "--senders": senders = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000)
            case "--window": window = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000)
            case "--timeout": timeout = try Self.seconds(after: flag, in: &remaining)
            case "--stall": stall = try Self.seconds(after: flag, in: &remaining)
            case "--binary": binary = true
            case "--server-pid": serverPID = try Self.integer(after: flag, in: &remaining, range: 1...Int(Int32.max))
            default:
                guard mode.isFirebase else { throw UsageError(description: "unknown argument \(flag)") }
                try firebase.parse(flag, in: &remaining)
            }
        }
        guard portGiven else { throw UsageError(description: "--port is required") }
        if mode.isFirebase {
            try completeFirebase(durationGiven: durationGiven, pathGiven: pathGiven)
        }
        guard senders <= connections else { throw UsageError(description: "--senders must not exceed --connections") }
        if mode == .broadcast, senders > 1, payload < SenderTag.length {
            throw UsageError(description: "with several senders --payload must be at least \(SenderTag.length) bytes")
        }
    }

    static func value(after flag: String, in remaining: inout ArraySlice<String>) throws -> String {
        guard let value = remaining.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
        return value
    }

    static func integer(
        after flag: String, in remaining: inout ArraySlice<String>, range: ClosedRange<Int>
    ) throws -> Int {
        let text = try value(after: flag, in: &remaining)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(description: "\(flag) must be an integer in \(range), got \(text)")
        }
        return number
    }

    static func seconds(after flag: String, in remaining: inout ArraySlice<String>) throws -> Double {
        let text = try value(after: flag, in: &remaining)
        guard let number = Double(text), number >= 0, number <= 86_400 else {
            throw UsageError(description: "\(flag) must be a number of seconds in 0...86400, got \(text)")
        }
        return number
    }
}
