import DataModel
import Dispatch
@testable import Store
import Testing

@Suite("A replica cut off from its log")
struct ReplicaCutOffTests {
    /// Waits for `condition` (bounded: 10 s).
    static func until(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_000 {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return condition()
    }

    @Test("answers no read and acknowledges nothing while cut off, tells its owner, and answers after catching up")
    func holdsEverythingUntilItCaughtUp() async throws {
        let log = MemoryLog()
        let told = Locked<[Bool]>([])
        var configuration = StoreConfiguration(replication: log.node("cut"))
        configuration.cutOff = { cutOff in told.withLock { $0.append(cutOff) } }
        let cut = try Store(configuration: configuration)
        let other = try Store(configuration: StoreConfiguration(replication: log.node("other")))
        let first: Void = await withCheckedContinuation { continuation in
            other.write(try! Fixture.set("/x", "1"), by: .privileged) { _ in continuation.resume() }
        }
        _ = first
        log.cutOff("cut")
        let second: Void = await withCheckedContinuation { continuation in
            other.write(try! Fixture.set("/x", "2"), by: .privileged) { _ in continuation.resume() }
        }
        _ = second
        let seen = Locked<Node?>(nil)
        let acknowledged = Locked(false)
        cut.read(try Fixture.path("/x")) { node in seen.withLock { $0 = node } }
        cut.write(try Fixture.set("/y", "3"), by: .privileged) { _ in acknowledged.withLock { $0 = true } }
        #expect(await Self.until { cut.isCutOff })
        #expect(told.value == [true])
        #expect(seen.value == nil && !acknowledged.value)
        log.heal("cut")
        #expect(await Self.until { seen.value != nil && acknowledged.value })
        // Answered from the replica once it held what the other node acknowledged while it was cut off.
        #expect(seen.value == (try Fixture.node("2")))
        #expect(!cut.isCutOff && told.value == [true, false])
    }
}
