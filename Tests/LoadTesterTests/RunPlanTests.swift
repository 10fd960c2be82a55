import Testing

@testable import LoadTester

@Suite("RunPlan")
struct RunPlanTests {
    private func configuration(
        _ scenario: BenchScenario, rooms: Int = 1, writers: Int = 1, messages: Int = 1000, subscribers: Int = 10
    ) -> BenchConfiguration {
        var configuration = BenchConfiguration(scenario: scenario)
        configuration.rooms = rooms
        configuration.writers = writers
        configuration.messages = messages
        configuration.subscribers = subscribers
        return configuration
    }

    @Test("spreads writers over rooms and counts every room's updates", arguments: [
        (BenchScenario.rooms, 10, 3, 100, 4), (.rooms, 2, 5, 99, 3), (.fanout, 1, 4, 10, 7), (.rooms, 100, 1, 1000, 2),
        (.writes, 1, 20, 1000, 2), (.query, 1, 1, 77, 5),
    ])
    func spreadsWriters(scenario: BenchScenario, rooms: Int, writers: Int, messages: Int, subscribers: Int) throws {
        let configuration = configuration(
            scenario, rooms: rooms, writers: writers, messages: messages, subscribers: subscribers)
        try configuration.validate()
        let plan = RunPlan(configuration)
        #expect(plan.rooms == rooms)
        #expect(plan.writers == writers)
        #expect(plan.messagesPerRoom.reduce(0, +) == messages)
        #expect(plan.totalWrites == messages)
        var counted = [Int](repeating: 0, count: rooms)
        var lastSequence = [[Int]](repeating: [Int](repeating: 0, count: rooms), count: writers)
        for writer in 0..<writers {
            let own = RunPlan.rooms(ofWriter: writer, writers: writers, rooms: rooms)
            for put in 0..<plan.writerQuota[writer] {
                let target = plan.target(ofWriter: writer, put: put)
                #expect(target.room == own[put % own.count])
                #expect(target.sequence == lastSequence[writer][target.room] + 1)
                lastSequence[writer][target.room] = target.sequence
                counted[target.room] += 1
            }
        }
        #expect(counted == plan.messagesPerRoom)
        #expect(plan.expectedDeliveries == messages * subscribers)
        #expect(plan.connections == writers + rooms * subscribers)
    }

    @Test("knows room 0's last value only when one writer writes there")
    func knowsFinalValueOfRoomZero() {
        let single = RunPlan(configuration(.rooms, rooms: 4, writers: 2, messages: 10))
        #expect(single.finalValueOfRoomZero?.writer == 0)
        #expect(single.finalValueOfRoomZero?.sequence == 3)  // writer 0: 5 writes over rooms 0 and 2
        let shared = RunPlan(configuration(.fanout, writers: 2, messages: 10))
        #expect(shared.finalValueOfRoomZero == nil)
    }

    @Test("places the stalled subscriber last, in room 0, and derives the writes from rate and duration")
    func placesStalledSubscriber() throws {
        var configuration = configuration(.fanout, subscribers: 5)
        configuration.rate = 100
        configuration.duration = 2.5
        configuration.stallSeconds = 3
        try configuration.validate()
        let plan = RunPlan(configuration)
        #expect(configuration.effectiveMessages == 250)
        #expect(plan.connections == 7)
        #expect(plan.stalledIndex == 6)
        #expect(plan.role(of: 6).role == .stalled)
        #expect(plan.role(of: 0).role == .writer)
        #expect(plan.role(of: 1) == (.subscriber, 0))
        #expect(configuration.upgradeTarget(try configuration.serverURL) == "/.ws?v=5&ns=bench")
    }

    @Test("listens where each scenario and protocol expects")
    func listensWhereExpected() {
        #expect(RunPlan(configuration(.query)).listenPaths == [Array("/bench/feed".utf8)])
        #expect(RunPlan(configuration(.query)).pushPrefixes == [[]])
        #expect(RunPlan(configuration(.writes)).listenPaths == [Array("/bench/writes".utf8)])
        var mqtt = configuration(.fanout)
        mqtt.wireProtocol = .mqtt
        #expect(RunPlan(mqtt).listenPaths == [Array("bench/room0".utf8)])
        var idle = BenchConfiguration(scenario: .connections)
        idle.connections = 12
        let plan = RunPlan(idle)
        #expect(plan.connections == 12)
        #expect(plan.writers == 0)
        #expect(plan.role(of: 11).role == .idle)
        #expect(plan.expectedDeliveries == 0)
    }
}

@Suite("BenchConfiguration")
struct BenchConfigurationTests {
    @Test("refuses inconsistent settings", arguments: [
        { (configuration: inout BenchConfiguration) in configuration.rooms = 3 },
        { $0.writers = 5; $0.messages = 4 },
        { $0.namespace = "a&b" },
        { $0.rate = 0 },
        { $0.wireProtocol = .raw; $0.authToken = "owner" },
        { $0.url = "http://127.0.0.1:9000" },
        { $0.url = "ws://127.0.0.1:0" },
        { $0.caFile = "/tmp/ca.pem" },
        { $0.threads = 0 },
        { $0.stallSeconds = 2; $0.wireProtocol = .mqtt },
    ] as [@Sendable (inout BenchConfiguration) -> Void])
    func refusesInconsistentSettings(change: @Sendable (inout BenchConfiguration) -> Void) {
        var configuration = BenchConfiguration(scenario: .fanout)
        change(&configuration)
        #expect(throws: BenchConfigurationError.self) { try configuration.validate() }
    }

    @Test("accepts each scenario's defaults", arguments: BenchScenario.allCases)
    func acceptsDefaults(scenario: BenchScenario) throws {
        try BenchConfiguration(scenario: scenario).validate()
    }

    @Test("keeps scenarios to the protocols they speak")
    func keepsProtocols() {
        var rooms = BenchConfiguration(scenario: .rooms)
        rooms.wireProtocol = .mqtt
        #expect(throws: BenchConfigurationError.self) { try rooms.validate() }
        var echo = BenchConfiguration(scenario: .echo)
        echo.wireProtocol = .firebase
        #expect(throws: BenchConfigurationError.self) { try echo.validate() }
        var query = BenchConfiguration(scenario: .query)
        query.orderBy = "name"
        #expect(throws: BenchConfigurationError.self) { try query.validate() }
    }
}

@Suite("ServerURL")
struct ServerURLTests {
    @Test("parses ws and wss URLs", arguments: [
        ("ws://127.0.0.1:9000", false, "127.0.0.1", 9000, "/", false, "127.0.0.1:9000"),
        ("wss://example.com/path?x=1", true, "example.com", 443, "/path?x=1", true, "example.com"),
        ("ws://[::1]:80/", false, "::1", 80, "/", false, "[::1]"),
        ("ws://host?ns=a", false, "host", 80, "/?ns=a", true, "host"),
    ])
    func parses(
        text: String, secure: Bool, host: String, port: Int, target: String, hasPath: Bool, hostHeader: String
    ) throws {
        let url = try ServerURL(text)
        #expect(url.secure == secure)
        #expect(url.host == host)
        #expect(url.port == port)
        #expect(url.target == target)
        #expect(url.hasPath == hasPath)
        #expect(url.hostHeader == hostHeader)
    }

    @Test("refuses other URLs", arguments: ["http://x", "ws://", "ws://x:99999", "ws://u@x", "ws://x/#f", "ws://[::1"])
    func refuses(text: String) {
        #expect(throws: BenchConfigurationError.self) { try ServerURL(text) }
    }
}
