/// What one worker (or, merged, a process or the whole run) counted; read after joining the worker's thread.
struct WorkerResult: Codable, Sendable {
    /// Connections that became ready, and those that failed before.
    var opened = 0
    var failedConnects = 0
    /// Ready connections the server closed (or reset) afterwards.
    var closedByServer = 0
    /// Updates delivered to counted subscribers (echo: round trips).
    var received = 0
    /// Writes sent, acknowledged with `ok` (or come back, for MQTT and raw), and answered with another status.
    var sent = 0
    var acks = 0
    var rejectedWrites = 0
    /// query: children that left a subscriber's window (a `null` in a push).
    var evictions = 0
    /// Pushes to a ready subscriber that were not updates at or below its path.
    var unexpectedPushes = 0
    /// Updates that did not follow the previous one of their room (checked in rooms with one writer).
    var outOfOrder = 0
    /// When the last delivery and the last acknowledgement arrived (`monotonicNanoseconds()`).
    var lastDelivery: UInt64 = 0
    var lastAck: UInt64 = 0
    /// The first few errors, for the report.
    var errors: [String] = []
    /// The stalled subscriber's story, from the worker that owns it.
    var stall: StallOutcome?
    /// The reference subscriber's last value, from the worker that owns it.
    var referenceValue: BenchValue?

    /// Adds another worker's counts.
    mutating func merge(_ other: WorkerResult) {
        opened += other.opened
        failedConnects += other.failedConnects
        closedByServer += other.closedByServer
        received += other.received
        sent += other.sent
        acks += other.acks
        rejectedWrites += other.rejectedWrites
        evictions += other.evictions
        unexpectedPushes += other.unexpectedPushes
        outOfOrder += other.outOfOrder
        lastDelivery = max(lastDelivery, other.lastDelivery)
        lastAck = max(lastAck, other.lastAck)
        errors += other.errors.prefix(max(0, 5 - errors.count))
        stall = stall ?? other.stall
        referenceValue = referenceValue ?? other.referenceValue
    }
}
