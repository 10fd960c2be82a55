/// The workload a run drives.
enum LoadMode: String, Sendable {
    /// Each connection keeps one message in flight; measures round trips per second and latency.
    case echo
    /// Senders publish messages that the server fans out to every connection; measures deliveries per second.
    case broadcast
    /// Opens connections and holds them; used to read the server's memory per connection.
    case idle
}

/// Command-line options of `ws-load`.
struct LoadOptions: Sendable {
    static let usage = """
        usage: ws-load echo      --port N [--connections 100] [--duration 10] [--payload 64]
               ws-load broadcast --port N [--connections 1000] [--messages 1000] [--payload 64] [--senders 1] [--window 32]
               ws-load idle      --port N [--connections 10000] [--hold 10]
        common: [--host 127.0.0.1] [--path P] [--threads 1] [--connect-window 256] [--timeout 120] [--stall 10] [--binary]
                [--server-pid PID]
        --messages is the total over all senders; every connection should receive each of them once.
        --window bounds each sender's messages in flight (sent but not yet received back on its own connection).
        --path defaults to /echo for echo and idle, /broadcast for broadcast.
        --server-pid: also report the server's CPU time during the workload (from /proc/PID/stat).
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
        }
        var portGiven = false
        while let flag = remaining.popFirst() {
            switch flag {
            case "--host": host = try Self.value(after: flag, in: &remaining)
            case "--port":
                port = try Self.integer(after: flag, in: &remaining, range: 1...65535)
                portGiven = true
            case "--path": path = try Self.value(after: flag, in: &remaining)
            case "--connections": connections = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000)
            case "--threads": threads = try Self.integer(after: flag, in: &remaining, range: 1...64)
            case "--connect-window": connectWindow = try Self.integer(after: flag, in: &remaining, range: 1...100_000)
            case "--duration": duration = try Self.seconds(after: flag, in: &remaining)
            case "--hold": hold = try Self.seconds(after: flag, in: &remaining)
            case "--messages": messages = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000_000)
            case "--payload": payload = try Self.integer(after: flag, in: &remaining, range: 0...65535)
            case "--senders": senders = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000)
            case "--window": window = try Self.integer(after: flag, in: &remaining, range: 1...1_000_000)
            case "--timeout": timeout = try Self.seconds(after: flag, in: &remaining)
            case "--stall": stall = try Self.seconds(after: flag, in: &remaining)
            case "--binary": binary = true
            case "--server-pid": serverPID = try Self.integer(after: flag, in: &remaining, range: 1...Int(Int32.max))
            default: throw UsageError(description: "unknown argument \(flag)")
            }
        }
        guard portGiven else { throw UsageError(description: "--port is required") }
        guard senders <= connections else { throw UsageError(description: "--senders must not exceed --connections") }
        if mode == .broadcast, senders > 1, payload < SenderTag.length {
            throw UsageError(description: "with several senders --payload must be at least \(SenderTag.length) bytes")
        }
    }

    private static func value(after flag: String, in remaining: inout ArraySlice<String>) throws -> String {
        guard let value = remaining.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
        return value
    }

    private static func integer(
        after flag: String, in remaining: inout ArraySlice<String>, range: ClosedRange<Int>
    ) throws -> Int {
        let text = try value(after: flag, in: &remaining)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(description: "\(flag) must be an integer in \(range), got \(text)")
        }
        return number
    }

    private static func seconds(after flag: String, in remaining: inout ArraySlice<String>) throws -> Double {
        let text = try value(after: flag, in: &remaining)
        guard let number = Double(text), number >= 0, number <= 86_400 else {
            throw UsageError(description: "\(flag) must be a number of seconds in 0...86400, got \(text)")
        }
        return number
    }
}
