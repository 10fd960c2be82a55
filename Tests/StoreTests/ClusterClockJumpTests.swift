import DataModel
import Dispatch
@testable import Store
import Testing

/// A node's wall clock that a test moves (an NTP step, an operator's `date -s`, a VM restored from a snapshot).
final class MovableClock: Sendable {
    private let offset = Locked(0.0)

    /// Moves the clock by `milliseconds` from the real time (0: back to it).
    func set(offsetMilliseconds milliseconds: Double) { offset.withLock { $0 = milliseconds } }

    /// The clock, as a ``StoreConfiguration`` reads it.
    var read: @Sendable () -> Double { { StoreConfiguration.systemClock() + self.offset.value } }
}

@Suite("Clustered stores whose wall clocks jump")
struct ClusterClockJumpTests {
    static let hour = 3_600_000.0

    static func replica(_ name: String, on log: MemoryLog, clock: MovableClock,
                        declaredDown: Locked<Int>? = nil) throws -> Store
    {
        var configuration = StoreConfiguration(clock: clock.read, replication: log.node(name))
        configuration.declaredDown = { declaredDown?.withLock { $0 += 1 } }
        return try Store(configuration: configuration)
    }

    /// Whether `store` holds a value at `path`.
    static func holds(_ store: Store, _ path: String) async throws -> Bool {
        await !store.value(at: try Fixture.path(path)).isEmpty
    }

    static func serverTime(_ store: Store, _ path: String) async throws -> Double? {
        let written = await store.apply(try Fixture.set(path, #"{".sv":"timestamp"}"#))
        _ = try written.get()
        guard case .number(let time)? = await store.value(at: try Fixture.path(path)).leafValue else { return nil }
        return time
    }

    @Test("a node whose clock is an hour ahead declares no live node down", .timeLimit(.minutes(1)))
    func clockAheadDeclaresNobodyDown() async throws {
        let log = MemoryLog()
        let told = Locked(0)
        let alive = try Self.replica("alive", on: log, clock: MovableClock(), declaredDown: told)
        let ahead = MovableClock()
        ahead.set(offsetMilliseconds: Self.hour)
        let judge = try Self.replica("judge", on: log, clock: ahead)
        let armed = try Fixture.update("/", [("presence/alice", #""offline""#)])
        let registered: Bool = await withCheckedContinuation { continuation in
            alive.armDisconnect(session: "a1", write: armed) { continuation.resume(returning: $0) }
        }
        #expect(registered)
        // The judge's entries carry its clock: the log's time is an hour ahead from its first one on.
        let logTime = try #require(try await Self.serverTime(judge, "/judged"))
        #expect(logTime >= StoreConfiguration.systemClock() + Self.hour - 60_000)
        // Every later entry of "alive" (its heartbeats, one a second) gets the log's time, which stays where the
        // judge's entry put it, while the judge's clock runs on. Before, the judge's presence ticks therefore found
        // "alive" silent for 5 s about 5 s later, and declared it down. Watch for 8 of them.
        let watchedUntil = ContinuousClock.now + .seconds(8)
        var declared = false
        while !declared, ContinuousClock.now < watchedUntil {
            declared = try await Self.holds(judge, "/presence/alice")
            if !declared { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(!declared, "a live node was declared down")
        #expect(told.value == 0)
        #expect(try await !Self.holds(alive, "/presence/alice"))
    }

    @Test("a node that dies after another's clock ran ahead is declared down in time; server times never go back",
          .timeLimit(.minutes(1)))
    func deadNodeFoundAfterAJumpBack() async throws {
        let log = MemoryLog()
        let jumper = MovableClock()
        let steady = try Self.replica("steady", on: log, clock: MovableClock())
        let jumping = try Self.replica("jumping", on: log, clock: jumper)
        jumper.set(offsetMilliseconds: Self.hour)
        let ahead = try #require(try await Self.serverTime(jumping, "/ahead"))
        jumper.set(offsetMilliseconds: 0)
        // The log's time stays an hour ahead (it never goes back): through either node, server times do not fall.
        let afterJumpBack = try #require(try await Self.serverTime(jumping, "/after"))
        let throughSteady = try #require(try await Self.serverTime(steady, "/steady"))
        #expect(afterJumpBack >= ahead && throughSteady >= afterJumpBack, "\(ahead), \(afterJumpBack), \(throughSteady)")
        // A node arms a write, then dies. Its entry's time is the log's, an hour ahead of every clock: before, no
        // survivor found it silent until real time caught up with the log's.
        let ghost = log.node("ghost")
        let armed = try Fixture.update("/", [("presence/bob", #""offline""#)])
        let proposal = Proposal(node: "ghost", number: 1, clock: StoreConfiguration.systemClock(),
                                operations: [.armDisconnect(node: "ghost", session: "g1", write: armed)])
        ghost.append(ProposalCodec.encode(proposal), id: proposal.id) { _ in }
        let started = ContinuousClock.now
        var fired = false
        while !fired, ContinuousClock.now - started < .seconds(20) {
            let onSteady = try await Self.holds(steady, "/presence/bob")
            let onJumping = try await Self.holds(jumping, "/presence/bob")
            fired = onSteady && onJumping
            if !fired { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(fired, "the dead node's onDisconnect write did not run within 20 s")
    }
}
