/// Options of the Firebase workloads (`fanout`, `rooms`), parsed after the common ones.
struct FirebaseOptions: Sendable {
    /// Subscribers in total (fanout) or per room (rooms); nil: the mode's default.
    var subscribers: Int?
    /// Rooms (paths); nil: 1 for fanout, 100 for rooms.
    var rooms: Int?
    /// Connections that write (and listen to nothing).
    var writers = 1
    /// Puts per second over all writers; nil: as fast as each writer's `--window` of unacknowledged puts allows.
    var rate: Double?
    /// The `ns` query parameter of the connection URL.
    var namespace = "bench"
    /// Seconds the extra stalled subscriber stops reading; 0: no stalled subscriber.
    var stallSeconds = 0.0
    /// Seconds after the workload's start at which the stalled subscriber stops reading.
    var stallAfter = 1.0
    /// The server's Prometheus endpoint, read before and after the workload.
    var metricsURL: String?
    /// Print deliveries, the slowest delivery and the deliveries slower than 10 ms for every second of the run.
    var timeline = false

    /// Parses one Firebase option `flag` and its value; throws for an unknown flag.
    mutating func parse(_ flag: String, in remaining: inout ArraySlice<String>) throws {
        switch flag {
        case "--subscribers":
            subscribers = try LoadOptions.integer(after: flag, in: &remaining, range: 1...1_000_000)
        case "--rooms": rooms = try LoadOptions.integer(after: flag, in: &remaining, range: 1...100_000)
        case "--writers": writers = try LoadOptions.integer(after: flag, in: &remaining, range: 1...10_000)
        case "--rate":
            let text = try LoadOptions.value(after: flag, in: &remaining)
            guard let value = Double(text), value > 0, value <= 100_000_000 else {
                throw LoadOptions.UsageError(description: "--rate must be a number in (0, 1e8], got \(text)")
            }
            rate = value
        case "--ns": namespace = try LoadOptions.value(after: flag, in: &remaining)
        case "--stall-seconds": stallSeconds = try LoadOptions.seconds(after: flag, in: &remaining)
        case "--stall-after": stallAfter = try LoadOptions.seconds(after: flag, in: &remaining)
        case "--metrics-url": metricsURL = try LoadOptions.value(after: flag, in: &remaining)
        case "--timeline": timeline = true
        default: throw LoadOptions.UsageError(description: "unknown argument \(flag)")
        }
    }
}

extension LoadOptions {
    /// Subscribers of each room, stalled subscriber excluded.
    var subscribersPerRoom: Int { firebase.subscribers ?? (mode == .fanout ? 1000 : 100) }
    /// Rooms the subscribers are spread over.
    var roomCount: Int { firebase.rooms ?? (mode == .fanout ? 1 : 100) }
    /// Whether a stalled subscriber takes part.
    var hasStalledSubscriber: Bool { firebase.stallSeconds > 0 }

    /// Checks the Firebase options together and derives the connection count, path and message count.
    mutating func completeFirebase(durationGiven: Bool, pathGiven: Bool) throws {
        if mode == .fanout, let rooms = firebase.rooms, rooms != 1 {
            throw UsageError(description: "fanout has one room; use rooms for --rooms \(rooms)")
        }
        if let rate = firebase.rate, durationGiven {
            messages = max(1, Int((rate * duration).rounded()))
        }
        guard messages >= firebase.writers else {
            throw UsageError(description: "--messages (\(messages)) must be at least --writers (\(firebase.writers))")
        }
        guard firebase.namespace.utf8.allSatisfy({ Self.isURLSafe($0) }) else {
            throw UsageError(description: "--ns may hold letters, digits, '-' and '_' only")
        }
        if !pathGiven { path = "/.ws?v=5&ns=\(firebase.namespace)" }
        let subscribers = roomCount * subscribersPerRoom
        connections = firebase.writers + subscribers + (hasStalledSubscriber ? 1 : 0)
    }

    private static func isURLSafe(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
