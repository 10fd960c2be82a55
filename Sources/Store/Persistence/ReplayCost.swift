/// What replaying journal records costs at start-up, per record: the figure by which a snapshot becomes due
/// (``PersistenceConfiguration/snapshotReplaySeconds``).
///
/// Replay is dominated by a fixed cost per record (decoding it, applying one change to the tree) until records are
/// large; the bytes have their own trigger (``PersistenceConfiguration/snapshotJournalBytes``). The cost is taken
/// from this start's own replay when it replayed enough records to tell, else from a figure measured on the
/// development machine (docs/benchmarks.md, "Start-up after a long journal").
struct ReplayCost: Sendable, Equatable {
    /// Seconds to replay one record.
    let secondsPerRecord: Double

    /// 931,949 small records replayed in 3.65 s on the 2-core development machine: about 4 µs each.
    static let measuredDefault = ReplayCost(secondsPerRecord: 4e-6)
    /// Fewer replayed records than this say too little about the cost per record.
    static let minimumSample = 10_000

    /// The cost this start's replay shows (`records` in `seconds`), or the default when it replayed too few.
    static func observed(records: Int, seconds: Double) -> ReplayCost {
        guard records >= minimumSample, seconds > 0 else { return measuredDefault }
        return ReplayCost(secondsPerRecord: seconds / Double(records))
    }

    /// Seconds a start would take to replay `records`.
    func seconds(toReplay records: UInt64) -> Double {
        Double(records) * secondsPerRecord
    }
}
