import Synchronization

/// The live wire sessions by session id, for `ls` clean-up and the live gauges.
final class SessionDirectory: Sendable {
    private let sessions = Mutex<[String: WireSession]>([:])
    private let listens = Atomic<Int>(0)

    func add(_ session: WireSession) {
        sessions.withLock { $0[session.sessionID] = session }
    }

    func remove(_ session: WireSession) {
        sessions.withLock { all in
            if all[session.sessionID] === session { all[session.sessionID] = nil }
        }
    }

    /// The live session with id `id`.
    func session(withID id: String) -> WireSession? {
        sessions.withLock { $0[id] }
    }

    var count: Int { sessions.withLock { $0.count } }

    /// Every live session.
    var all: [WireSession] { sessions.withLock { Array($0.values) } }

    /// Listens held by all sessions.
    var listenCount: Int { listens.load(ordering: .relaxed) }

    func listensChanged(by delta: Int) {
        listens.add(delta, ordering: .relaxed)
    }
}
