import Testing

@testable import WSLoad

@Suite("FirebasePlan and options")
struct FirebasePlanTests {
    private func options(_ arguments: String) throws -> LoadOptions {
        try LoadOptions(arguments: arguments.split(separator: " ").map(String.init))
    }

    @Test("spreads writers over rooms and counts every room's updates", arguments: [
        ("rooms --port 1 --rooms 10 --writers 3 --messages 100 --subscribers 4", 10, 3),
        ("rooms --port 1 --rooms 2 --writers 5 --messages 99 --subscribers 3", 2, 5),
        ("fanout --port 1 --writers 4 --messages 10 --subscribers 7", 1, 4),
        ("rooms --port 1 --rooms 100 --messages 1000", 100, 1),
    ])
    func spreadsWriters(arguments: String, rooms: Int, writers: Int) throws {
        let options = try options(arguments)
        let plan = FirebasePlan(options: options)
        #expect(plan.rooms == rooms)
        #expect(plan.writers == writers)
        #expect(plan.messagesPerRoom.reduce(0, +) == options.messages)
        #expect(plan.writerQuota.reduce(0, +) == options.messages)
        var counted = [Int](repeating: 0, count: rooms)
        var lastSequence = [[Int]](repeating: [Int](repeating: 0, count: rooms), count: writers)
        for writer in 0..<writers {
            let own = FirebasePlan.rooms(ofWriter: writer, writers: writers, rooms: rooms)
            for put in 0..<plan.writerQuota[writer] {
                let target = plan.target(ofWriter: writer, put: put)
                #expect(target.room == own[put % own.count])
                #expect(target.sequence == lastSequence[writer][target.room] + 1)
                lastSequence[writer][target.room] = target.sequence
                counted[target.room] += 1
            }
        }
        #expect(counted == plan.messagesPerRoom)
        #expect(plan.expectedDeliveries == options.messages * plan.subscribersPerRoom)
        #expect(options.connections == writers + rooms * plan.subscribersPerRoom)
    }

    @Test("knows room 0's last value only when one writer writes there")
    func knowsFinalValueOfRoomZero() throws {
        let single = FirebasePlan(options: try options("rooms --port 1 --rooms 4 --writers 2 --messages 10"))
        #expect(single.finalValueOfRoomZero?.writer == 0)
        #expect(single.finalValueOfRoomZero?.sequence == 3)  // writer 0: 5 puts over rooms 0 and 2
        let shared = FirebasePlan(options: try options("fanout --port 1 --writers 2 --messages 10"))
        #expect(shared.finalValueOfRoomZero == nil)
    }

    @Test("places the stalled subscriber last, in room 0, and derives messages from rate and duration")
    func placesStalledSubscriber() throws {
        let options = try options("fanout --port 1 --subscribers 5 --rate 100 --duration 2.5 --stall-seconds 3")
        let plan = FirebasePlan(options: options)
        #expect(options.messages == 250)
        #expect(options.connections == 7)
        #expect(plan.stalledIndex == 6)
        #expect(plan.role(of: 6).role == .stalled)
        #expect(plan.role(of: 0).role == .writer)
        #expect(plan.role(of: 1) == (.subscriber, 0))
        #expect(options.path == "/.ws?v=5&ns=bench")
    }

    @Test("refuses inconsistent options", arguments: [
        "fanout --port 1 --rooms 3", "fanout --port 1 --writers 5 --messages 4", "fanout --port 1 --ns a&b",
        "fanout --port 1 --rate 0", "echo --port 1 --writers 2",
    ])
    func refusesInconsistentOptions(arguments: String) {
        #expect(throws: LoadOptions.UsageError.self) { try options(arguments) }
    }
}
