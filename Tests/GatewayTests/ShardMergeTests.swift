@testable import Gateway
@testable import Store
import Testing

@Suite("Merging shard change streams for a wide view")
struct ShardMergeTests {
    @Test("a multi-shard write waits for every participant; earlier single-shard records go first")
    func waitsForParticipants() throws {
        var merge = ShardMerge(shardCount: 2)
        merge.accept(0)
        merge.accept(1)
        let multi = [try change("/a", "null", "1"), try change("/b", "null", "2")]
        let earlierOnB = [try change("/b", "null", "5")]
        let tookMultiFromA = merge.enqueue(ChangeRecord(shard: 0, sequence: 1, transaction: 9, participants: [0, 1], changes: multi))
        #expect(tookMultiFromA)
        #expect(merge.nextReady() == nil)
        let tookEarlierFromB = merge.enqueue(ChangeRecord(shard: 1, sequence: 1, transaction: nil, participants: [1], changes: earlierOnB))
        #expect(tookEarlierFromB)
        #expect(merge.nextReady()?.changes == earlierOnB)
        #expect(merge.nextReady() == nil)
        let tookMultiFromB = merge.enqueue(ChangeRecord(shard: 1, sequence: 2, transaction: 9, participants: [0, 1], changes: multi))
        #expect(tookMultiFromB)
        #expect(merge.nextReady()?.changes == multi)
        #expect(merge.nextReady() == nil)
    }

    @Test("records of a shard the initial read has not passed are already in the value and dropped")
    func unacceptedShardDropped() throws {
        var merge = ShardMerge(shardCount: 2)
        merge.accept(0)
        let tookUnaccepted = merge.enqueue(ChangeRecord(shard: 1, sequence: 1, transaction: nil, participants: [1], changes: []))
        #expect(!tookUnaccepted)
    }
}
