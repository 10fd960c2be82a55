import Primitives

extension BenchConfiguration {
    /// Writes over all writers: `messages`, or rate × duration when both are given.
    public var effectiveMessages: Int {
        if let rate, let duration { return max(1, Int((rate * duration).rounded())) }
        return messages
    }

    /// The parsed server URL (the first, when ``url`` lists several).
    public var serverURL: ServerURL {
        get throws(BenchConfigurationError) { try serverURLs[0] }
    }

    /// Every server URL: ``url`` may list the nodes of a cluster, comma-separated, all with the same scheme and
    /// path; connection `i` goes to node `i` modulo their count.
    public var serverURLs: [ServerURL] {
        get throws(BenchConfigurationError) {
            var urls: [ServerURL] = []
            for text in url.split(separator: ",", omittingEmptySubsequences: false) {
                urls.append(try ServerURL(String(text)))
            }
            guard let first = urls.first else { throw BenchConfigurationError("--url is empty") }
            for other in urls.dropFirst()
            where other.secure != first.secure || other.plainTCPScheme != first.plainTCPScheme
                || other.target != first.target
            {
                throw BenchConfigurationError("the URLs of --url must share their scheme and path")
            }
            return urls
        }
    }

    /// The request target of the upgrade: the URL's own path, or Firebase's `/.ws?v=5&ns=NS` when it has none.
    func upgradeTarget(_ server: ServerURL) -> String {
        if wireProtocol == .firebase, !server.hasPath { return "/.ws?v=5&ns=\(namespace)" }
        return server.target
    }

    /// Checks the options together and throws the first problem, naming the option.
    public func validate() throws(BenchConfigurationError) {
        _ = try serverURLs
        let server = try serverURL
        try checkProtocol(server)
        try Self.check("--threads", threads, in: 1...64)
        try Self.check("--connect-window", connectWindow, in: 1...1_000_000)
        try Self.check("--payload", payload, in: 0...1_000_000)
        if let processes { try Self.check("--processes", processes, in: 1...256) }
        if let sourceAddresses { try Self.check("--source-addresses", sourceAddresses, in: 1...250) }
        for (name, value) in [("--timeout", timeout), ("--stall-limit", stallLimit)] where !(value > 0) {
            throw BenchConfigurationError("\(name) must be positive, got \(value)")
        }
        if let rampUp, !(rampUp > 0) { throw BenchConfigurationError("--ramp-up must be positive") }
        if let rate, !(rate > 0 && rate <= 1e9) { throw BenchConfigurationError("--rate must be in (0, 1e9]") }
        if let duration, !(duration >= 0 && duration <= 86_400) {
            throw BenchConfigurationError("--duration must be in 0...86400 seconds")
        }
        guard namespace.utf8.allSatisfy(ASCIIBytes.isWordOrDash), !namespace.isEmpty else {
            throw BenchConfigurationError("--ns may hold letters, digits, '-' and '_' only")
        }
        if let serverPID { try Self.check("--server-pid", serverPID, in: 1...Int(Int32.max)) }
        if let metricsURL, !metricsURL.hasPrefix("http://"), !metricsURL.hasPrefix("https://") {
            throw BenchConfigurationError("--metrics-url must start with http:// or https://")
        }
        if !server.secure, caFile != nil { throw BenchConfigurationError("--ca-file needs a wss:// URL") }
        switch scenario {
        case .connections, .echo:
            try Self.check("--connections", connections, in: 1...10_000_000)
        case .fanout, .rooms, .query, .writes:
            try checkUpdates()
        }
    }

    private func checkProtocol(_ server: ServerURL) throws(BenchConfigurationError) {
        let allowed: [BenchProtocol]
        switch scenario {
        case .fanout, .connections: allowed = [.firebase, .mqtt, .raw, .redis, .nats]
        case .rooms: allowed = [.firebase, .redis, .nats]
        case .query, .writes: allowed = [.firebase]
        case .echo: allowed = [.raw]
        }
        guard allowed.contains(wireProtocol) else {
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            throw BenchConfigurationError("\(scenario.rawValue) speaks \(names), not \(wireProtocol.rawValue)")
        }
        if wireProtocol.isPlainTCP != (server.plainTCPScheme != nil)
            || (server.plainTCPScheme.map { $0 != wireProtocol.rawValue } ?? false)
        {
            throw BenchConfigurationError("--protocol \(wireProtocol.rawValue) needs a "
                + (wireProtocol.isPlainTCP ? "\(wireProtocol.rawValue)://" : "ws:// or wss://") + " --url")
        }
        if wireProtocol != .firebase, authToken != nil {
            throw BenchConfigurationError("--auth applies to the Firebase protocol only")
        }
    }

    private func checkUpdates() throws(BenchConfigurationError) {
        try Self.check("--subscribers", subscribers, in: scenario == .writes ? 0...1_000_000 : 1...1_000_000)
        try Self.check("--writers", writers, in: 1...100_000)
        try Self.check("--rooms", rooms, in: 1...100_000)
        try Self.check("--window", window, in: 1...1_000_000)
        try Self.check("--messages", messages, in: 1...1_000_000_000)
        guard effectiveMessages >= writers else {
            throw BenchConfigurationError("the run's writes (\(effectiveMessages)) must be at least --writers")
        }
        if scenario != .rooms, rooms != 1 {
            throw BenchConfigurationError("--rooms applies to the rooms scenario only")
        }
        if stallSeconds > 0 {
            guard scenario == .fanout || scenario == .rooms, wireProtocol == .firebase else {
                throw BenchConfigurationError("--stall-seconds applies to Firebase fanout and rooms only")
            }
        }
        if scenario == .query {
            try Self.check("--limit", limit, in: 1...100_000)
            try Self.check("--prefill", prefill, in: 0...1_000_000)
            guard orderBy == "ts" || orderBy == "seq" else {
                throw BenchConfigurationError("--order-by must be ts or seq (children the writers set), got \(orderBy)")
            }
        }
    }

    private static func check(
        _ name: String, _ value: Int, in range: ClosedRange<Int>
    ) throws(BenchConfigurationError) {
        guard range.contains(value) else {
            throw BenchConfigurationError("\(name) must be in \(range.lowerBound)...\(range.upperBound), got \(value)")
        }
    }
}
