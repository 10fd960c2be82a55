/// Who each connection of a Firebase run is and how many updates each room gets, fixed before the run.
///
/// Global connection indices: writers first (`0..<writers`), then the subscribers (subscriber `i` listens to room
/// `i % rooms`, so every room's subscribers spread over all worker threads), then the stalled subscriber (room 0).
/// Writer `j` writes to rooms `j, j + writers, …` (or room `j % rooms` when there are more writers than rooms) in
/// turn; its sequence numbers count per room from 1, so a room with one writer sees 1, 2, 3, … in order.
struct FirebasePlan: Sendable {
    /// What one connection does.
    enum Role: UInt8 {
        /// Not part of a Firebase run.
        case none
        /// Puts updates; listens to nothing.
        case writer
        /// Listens to its room and counts every update.
        case subscriber
        /// Listens to room 0 and stops reading for a while; counted apart.
        case stalled
    }

    let writers: Int
    let rooms: Int
    let subscribersPerRoom: Int
    /// Each writer's number of puts (over all its rooms).
    let writerQuota: [Int]
    /// Updates each room receives over the run.
    let messagesPerRoom: [Int]
    /// Writers that write to each room.
    let writersPerRoom: [Int]
    /// The stalled subscriber's global index, if there is one.
    let stalledIndex: Int?
    /// A subscriber of room 0 that reads all along: the stalled subscriber must end with its value.
    let referenceIndex: Int
    /// Each room's path, `/bench/room<i>`.
    let roomPaths: [[UInt8]]
    /// The bytes a data push at each room's path starts with (see `BenchPush`).
    let pushPrefixes: [[UInt8]]

    init(options: LoadOptions) {
        writers = options.firebase.writers
        rooms = options.roomCount
        subscribersPerRoom = options.subscribersPerRoom
        let messages = options.messages
        let writers = self.writers
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
        stalledIndex = options.hasStalledSubscriber ? writers + subscribers : nil
        referenceIndex = writers
        roomPaths = (0..<rooms).map { Array("/bench/room\($0)".utf8) }
        pushPrefixes = roomPaths.map { BenchPush.prefix(path: $0) }
    }

    /// The rooms writer `writer` writes to, in the order it cycles through them.
    static func rooms(ofWriter writer: Int, writers: Int, rooms: Int) -> [Int] {
        writers <= rooms ? Array(stride(from: writer, to: rooms, by: writers)) : [writer % rooms]
    }

    /// The room of writer `writer`'s put number `put` (from 0) and its sequence number there (from 1), computed
    /// without allocating (the hot path's version of `rooms(ofWriter:writers:rooms:)`).
    @inline(__always)
    func target(ofWriter writer: Int, put: Int) -> (room: Int, sequence: Int) {
        guard writers <= rooms else { return (writer % rooms, put + 1) }
        let count = (rooms - writer + writers - 1) / writers
        return (writer + (put % count) * writers, put / count + 1)
    }

    /// The role of global connection `index` and its room (a writer's first room).
    func role(of index: Int) -> (role: Role, room: Int) {
        if index < writers { return (.writer, Self.rooms(ofWriter: index, writers: writers, rooms: rooms)[0]) }
        if let stalledIndex, index == stalledIndex { return (.stalled, 0) }
        return (.subscriber, (index - writers) % rooms)
    }

    /// Deliveries all counted subscribers must receive together.
    var expectedDeliveries: Int {
        messagesPerRoom.reduce(0) { $0 + $1 * subscribersPerRoom }
    }

    /// Room 0's last value when only one writer writes there (its last sequence number); nil otherwise.
    var finalValueOfRoomZero: (writer: Int64, sequence: Int64)? {
        guard writersPerRoom[0] == 1, messagesPerRoom[0] > 0 else { return nil }
        return (0, Int64(messagesPerRoom[0]))
    }
}
