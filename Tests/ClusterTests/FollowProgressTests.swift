@testable import Cluster
import Testing

/// A subscription handle for the tests (FollowProgress only keeps and returns it).
private func handle(_ number: UInt) -> SubscriptionHandle {
    SubscriptionHandle(pointer: OpaquePointer(bitPattern: number)!)
}

/// Starts an attempt and makes its consumer with subscription `number`: the attempt's number.
private func started(_ progress: inout FollowProgress, subscription number: UInt, limit: Int = 4) -> UInt64? {
    guard let attempt = progress.start(at: 1, keepingAtMost: limit)?.attempt,
        progress.made(attempt, subscription: handle(number), at: 1)
    else { return nil }
    return attempt
}

@Suite("Following with several consumers at once")
struct FollowProgressTests {
    @Test("each attempt starts after the last position delivered; beyond the limit the oldest but the primary ends")
    func attemptsAndTheirLimit() throws {
        var progress = FollowProgress()
        progress.delivered = 10
        let first = progress.start(at: 1, keepingAtMost: 2)
        #expect(first?.from == 10 && first?.ended == nil)
        let firstAttempt = try #require(first?.attempt)
        let firstMade = progress.made(firstAttempt, subscription: handle(0x10), at: 1)
        let reception = progress.receive(1, at: 11, from: firstAttempt, heardAt: 2)
        let passed = progress.passed(11, from: firstAttempt, at: 2)  // the primary now
        #expect(firstMade && reception == .judge && passed?.isEmpty == true)
        let second = try #require(started(&progress, subscription: 0x20, limit: 2))
        let third = progress.start(at: 4, keepingAtMost: 2)
        #expect(third?.from == 11)
        #expect(third?.ended?.pointer == handle(0x20).pointer, "the oldest other than the primary ends")
        let secondMadeAgain = progress.made(second, subscription: handle(0x21), at: 1)
        #expect(!secondMadeAgain, "an ended attempt gets no subscription")
        #expect(progress.attempts.keys.sorted() == [firstAttempt, third?.attempt].compactMap { $0 })
    }

    @Test("an attempt ended before its consumer was made gets no subscription: the caller retires it")
    func endedBeforeMade() throws {
        var progress = FollowProgress()
        let attempt = try #require(progress.start(at: 1, keepingAtMost: 4)?.attempt)
        let ended = progress.endAll()
        let made = progress.made(attempt, subscription: handle(0x30), at: 1)
        #expect(ended.isEmpty && !made)
    }

    @Test("a position already delivered is dropped, a skipped consumer count is lost, and a pass ends the others")
    func receivingAndPassing() throws {
        var progress = FollowProgress()
        progress.delivered = 5
        let a = try #require(started(&progress, subscription: 0x40))
        let b = try #require(started(&progress, subscription: 0x50))
        let first = progress.receive(1, at: 6, from: a, heardAt: 2)
        let ended = progress.passed(6, from: a, at: 2)
        #expect(first == .judge && ended?.map(\.pointer) == [handle(0x50).pointer])
        let fromEnded = progress.receive(1, at: 6, from: b, heardAt: 2)
        let again = progress.receive(2, at: 6, from: a, heardAt: 2)
        let skipped = progress.receive(4, at: 7, from: a, heardAt: 2)
        let passedByEnded = progress.passed(7, from: b, at: 3)
        #expect(fromEnded == .drop, "b ended")
        #expect(again == .drop, "position 6 was delivered")
        #expect(skipped == .lost, "count 3 never came")
        #expect(passedByEnded == nil, "an ended attempt passes nothing")
        #expect(progress.delivered == 6 && progress.lastDelivery == 2)
    }

    @Test("while halted nothing starts and nothing is received")
    func halted() throws {
        var progress = FollowProgress()
        let a = try #require(started(&progress, subscription: 0x60))
        progress.isHalted = true
        let start = progress.start(at: 2, keepingAtMost: 4)
        let reception = progress.receive(1, at: 1, from: a, heardAt: 2)
        #expect(start == nil && reception == .drop)
    }

    @Test("a wait that runs out doubles the next, up to the limit; an answer resets it")
    func waits() {
        var progress = FollowProgress()
        let limits: ClosedRange<Int64> = 250...2000
        var waits: [Int64] = []
        for _ in 0..<4 {
            progress.answered(timedOut: true, limits: limits)
            waits.append(progress.consumerWaitMillis)
        }
        progress.answered(timedOut: false, limits: limits)
        #expect(waits == [500, 1000, 2000, 2000] && progress.consumerWaitMillis == 250)
    }

    @Test("a stall is reported once the stream holds more and nothing passed for the bound, then once per bound")
    func stallReports() {
        var progress = FollowProgress.beforeFollowing
        progress.knownHead = 9
        let notFollowing = progress.stallToReport(at: 200, after: 10)
        #expect(progress.start(at: 1, keepingAtMost: 4) == nil, "nothing starts before following is asked for")
        progress.isHalted = false
        _ = progress.start(at: 1, keepingAtMost: 4)
        progress.knownHead = 0
        progress.delivered = 5
        progress.lastDelivery = 100
        let caughtUp = progress.stallToReport(at: 200, after: 10)
        progress.knownHead = 9
        let early = progress.stallToReport(at: 109, after: 10)
        let first = progress.stallToReport(at: 110, after: 10)
        let again = progress.stallToReport(at: 115, after: 10)
        let next = progress.stallToReport(at: 120, after: 10)
        #expect(!notFollowing && !caughtUp && !early && first && !again && next)
        #expect(progress.stallReportedAt == 120)
    }

    @Test("reads start while following stalls with more known, one at a time, and deliver only the next position")
    func reading() {
        var progress = FollowProgress.beforeFollowing
        progress.knownHead = 10
        let beforeFollowing = progress.startReading(at: 100, after: 3)
        progress.isHalted = false
        progress.delivered = 4
        progress.lastDelivery = 98
        let early = progress.startReading(at: 100, after: 3)
        let stalled = progress.startReading(at: 101, after: 3)
        let second = progress.startReading(at: 102, after: 3)
        #expect(!beforeFollowing && !early && stalled && !second)
        let skipping = progress.read(6, at: 102)
        let next = progress.read(5, at: 102)
        #expect(!skipping && next && progress.delivered == 5 && progress.lastDelivery == 102)
        progress.endReading()
        progress.delivered = 10
        let caughtUp = progress.startReading(at: 200, after: 3)
        progress.isHalted = true
        let halted = progress.read(11, at: 200)
        #expect(!caughtUp && !halted && progress.delivered == 10)
    }

    @Test("a heartbeat counting more messages than the subscription got means it lost some")
    func heartbeats() throws {
        var progress = FollowProgress()
        let a = try #require(started(&progress, subscription: 0x70))
        let idle = progress.heard(from: a, at: 2, consumerDelivered: 0)
        let first = progress.receive(1, at: 1, from: a, heardAt: 3)
        let caughtUp = progress.heard(from: a, at: 4, consumerDelivered: 1)
        let flowControl = progress.heard(from: a, at: 4, consumerDelivered: 0)
        let behind = progress.heard(from: a, at: 5, consumerDelivered: 3)
        #expect(!idle && first == .judge && !caughtUp && !flowControl && behind)
    }

    @Test("the newest consumer's silence is noticed once per silence; a message or a heartbeat ends it")
    func silence() throws {
        var progress = FollowProgress()
        let notMade = try #require(progress.start(at: 1, keepingAtMost: 4)?.attempt)
        let beforeMade = progress.newestWentSilent(at: 10, after: 2)
        _ = progress.made(notMade, subscription: handle(0x80), at: 10)
        let early = progress.newestWentSilent(at: 11.5, after: 2)
        let silent = progress.newestWentSilent(at: 12, after: 2)
        let noticed = progress.newestWentSilent(at: 13, after: 2)
        _ = progress.heard(from: notMade, at: 13, consumerDelivered: 0)
        let heard = progress.newestWentSilent(at: 14, after: 2)
        let again = progress.newestWentSilent(at: 15, after: 2)
        let newer = try #require(started(&progress, subscription: 0x90))
        let newerSilent = progress.newestWentSilent(at: 15, after: 2)
        #expect(!beforeMade && !early && silent && !noticed && !heard && again && newer > notMade && newerSilent)
    }
}
