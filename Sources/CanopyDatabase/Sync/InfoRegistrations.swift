/// The locations under `.info` the client answers itself.
enum InfoKey: Hashable {
    /// `.info/connected`: whether the client is connected.
    case connected
    /// `.info/serverTimeOffset`: the server's clock minus this machine's, in milliseconds.
    case serverTimeOffset

    init?(path: String) {
        switch path {
        case ".info/connected": self = .connected
        case ".info/serverTimeOffset": self = .serverTimeOffset
        default: return nil
        }
    }
}

/// Registrations on `.info` locations.
struct InfoRegistrations {
    private var byKey: [InfoKey: [Registration]] = [:]

    mutating func add(_ registration: Registration, key: InfoKey) {
        byKey[key, default: []].append(registration)
    }

    mutating func remove(_ handle: UInt) {
        for key in byKey.keys { byKey[key]?.removeAll { $0.handle == handle } }
    }

    func registrations(for key: InfoKey) -> [Registration] {
        byKey[key] ?? []
    }
}
