/// Who each connection of a run is, what it listens to, and how many updates each path gets, fixed before the run
/// and identical in every worker thread and process.
///
/// Global connection indices: writers first (`0..<writers`), then the subscribers (subscriber `i` listens to room
/// `i % rooms`, so every room's subscribers spread over all workers), then the stalled subscriber (room 0). Writer
/// `j` writes to rooms `j, j + writers, …` (or room `j % rooms` when there are more writers than rooms) in turn; its
/// sequence numbers count per room from 1, so a room with one writer sees 1, 2, 3, … in order. The `connections`
/// and `echo` scenarios have neither writers nor rooms: every connection is idle or echoes.
struct RunPlan: Sendable {
    /// What one connection does.
    enum Role: UInt8, Sendable {
        /// Writes updates (and, with MQTT or raw WebSocket, receives its own copies as acknowledgements).
        case writer
        /// Listens to its room and counts every update.
        case subscriber
        /// Listens to room 0 and stops reading for a while; counted apart.
        case stalled
        /// Opens, listens once (Firebase, MQTT) and holds the connection.
        case idle
        /// Keeps one echo message in flight.
        case echo
    }

    let scenario: BenchScenario
    let wireProtocol: BenchProtocol
    let writers: Int
    let rooms: Int
    let subscribersPerRoom: Int
    /// Connections over all workers.
    let connections: Int
    /// Each writer's number of writes (over all its rooms).
    let writerQuota: [Int]
    /// Updates each room receives over the run.
    let messagesPerRoom: [Int]
    /// Writers that write to each room.
    let writersPerRoom: [Int]
    /// The stalled subscriber's global index, if there is one.
    let stalledIndex: Int?
    /// A subscriber of room 0 that reads all along: the stalled subscriber must end with its value.
    let referenceIndex: Int
    /// What each room's subscribers listen to: a Firebase path (`/bench/room0`) or an MQTT topic (`bench/room0`).
    let listenPaths: [[UInt8]]
    /// The bytes a Firebase data push of a whole update at each room's path starts with (see ``BenchPush``); empty
    /// where writes go below the listened path (query, writes), which the fast path does not cover.
    let pushPrefixes: [[UInt8]]

    init(_ configuration: BenchConfiguration) {
        scenario = configuration.scenario
        wireProtocol = configuration.wireProtocol
        let carriesUpdates = scenario != .connections && scenario != .echo
        writers = carriesUpdates ? configuration.writers : 0
        rooms = scenario == .rooms ? configuration.rooms : 1
        subscribersPerRoom = carriesUpdates ? configuration.subscribers : 0
        let messages = carriesUpdates ? configuration.effectiveMessages : 0
        let writers = self.writers
        let rooms = self.rooms
        writerQuota = (0..<writers).map { messages / writers + ($0 < messages % writers ? 1 : 0) }
        var perRoom = [Int](repeating: 0, count: rooms)
        var writersOfRoom = [Int](repeating: 0, count: rooms)
        for writer in 0..<writers {
            let own = Self.rooms(ofWriter: writer, writers: writers, rooms: rooms)
            let quota = writerQuota[writer]
            for (position, room) in own.enumerated() {
                perRoom[room] += quota / own.count + (position < quota % own.count ? 1 : 0)
                writersOfRoom[room] += 1
            }
        }
        messagesPerRoom = perRoom
        writersPerRoom = writersOfRoom
        let subscribers = rooms * subscribersPerRoom
        let hasStall = carriesUpdates && configuration.stallSeconds > 0
        stalledIndex = hasStall ? writers + subscribers : nil
        referenceIndex = writers
        connections = carriesUpdates ? writers + subscribers + (hasStall ? 1 : 0) : configuration.connections
        let topic = configuration.wireProtocol == .mqtt || configuration.wireProtocol.isPlainTCP
        let dotted = configuration.wireProtocol == .nats
        listenPaths = (0..<rooms).map { room in
            let path: String
            switch configuration.scenario {
            case .query: path = "bench/feed"
            case .writes: path = "bench/writes"
            case .connections: path = "bench/conn"
            default: path = "bench/room\(room)"
            }
            let name = dotted ? String(path.map { $0 == "/" ? "." : $0 }) : path
            return Array(((topic ? "" : "/") + name).utf8)
        }
        let writesBelowPath = scenario == .query || scenario == .writes
        pushPrefixes = listenPaths.map { writesBelowPath ? [] : BenchPush.prefix(path: $0) }
    }

    /// The rooms writer `writer` writes to, in the order it cycles through them.
    static func rooms(ofWriter writer: Int, writers: Int, rooms: Int) -> [Int] {
        writers <= rooms ? Array(stride(from: writer, to: rooms, by: writers)) : [writer % rooms]
    }

    /// The room of writer `writer`'s write number `put` (from 0) and its sequence number there (from 1), computed
    /// without allocating (the hot path's version of `rooms(ofWriter:writers:rooms:)`).
    @inline(__always)
    func target(ofWriter writer: Int, put: Int) -> (room: Int, sequence: Int) {
        guard writers <= rooms else { return (writer % rooms, put + 1) }
        let count = (rooms - writer + writers - 1) / writers
        return (writer + (put % count) * writers, put / count + 1)
    }

    /// The role of global connection `index` and its room (a writer's first room).
    func role(of index: Int) -> (role: Role, room: Int) {
        switch scenario {
        case .connections: return (.idle, 0)
        case .echo: return (.echo, 0)
        default: break
        }
        if index < writers { return (.writer, Self.rooms(ofWriter: index, writers: writers, rooms: rooms)[0]) }
        if let stalledIndex, index == stalledIndex { return (.stalled, 0) }
        return (.subscriber, (index - writers) % rooms)
    }

    /// Deliveries all counted subscribers must receive together.
    var expectedDeliveries: Int {
        messagesPerRoom.reduce(0) { $0 + $1 * subscribersPerRoom }
    }

    /// Writes over all writers.
    var totalWrites: Int {
        writerQuota.reduce(0, +)
    }

    /// Whether subscribers of `room` must see its sequence numbers 1, 2, 3, … (one writer there).
    @inline(__always)
    func checksOrder(of room: Int) -> Bool {
        writersPerRoom[room] == 1
    }

    /// Room 0's last value when only one writer writes there (its last sequence number); nil otherwise.
    var finalValueOfRoomZero: (writer: Int64, sequence: Int64)? {
        guard !writersPerRoom.isEmpty, writersPerRoom[0] == 1, messagesPerRoom[0] > 0 else { return nil }
        return (0, Int64(messagesPerRoom[0]))
    }
}
