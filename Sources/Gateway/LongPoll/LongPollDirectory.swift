import HTTP1
import Synchronization

/// The live long-poll channels, by long-poll id and by the hello's session id (long-polling.md §2, §7).
final class LongPollDirectory: Sendable {
    private struct Entries {
        var byID: [String: LongPollChannel] = [:]
        var bySessionID: [String: LongPollChannel] = [:]
    }

    private let entries = Mutex(Entries())

    /// The answer to a request naming no live session, or with the wrong password: the same for both, so a
    /// guessed id learns nothing (§3).
    static let unknownSession = LongPollScript.refusal(.notFound, "no such long-poll session")

    func add(_ channel: LongPollChannel) {
        entries.withLock { entries in
            entries.byID[channel.id] = channel
            entries.bySessionID[channel.sessionID] = channel
        }
    }

    func remove(_ channel: LongPollChannel) {
        entries.withLock { entries in
            if entries.byID[channel.id] === channel { entries.byID[channel.id] = nil }
            if entries.bySessionID[channel.sessionID] === channel { entries.bySessionID[channel.sessionID] = nil }
        }
    }

    /// The channel `credentials` name, when the password is its own (compared in constant time).
    func channel(_ credentials: LongPollRequest.Credentials) -> LongPollChannel? {
        guard let channel = entries.withLock({ $0.byID[credentials.id] }),
              Self.constantTimeEqual(channel.password, credentials.password)
        else { return nil }
        return channel
    }

    /// The channel carrying the session whose hello said `sessionID`.
    func channel(sessionID: String) -> LongPollChannel? {
        entries.withLock { $0.bySessionID[sessionID] }
    }

    var count: Int { entries.withLock { $0.byID.count } }

    var all: [LongPollChannel] { entries.withLock { Array($0.byID.values) } }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
