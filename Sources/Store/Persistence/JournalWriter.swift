#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Primitives
import Synchronization

/// The append-only journal of one namespace's log: frames records, writes them in batches and acknowledges them once
/// durable under the ``FsyncPolicy`` (group commit).
///
/// Appending is cheap and never blocks on I/O: the sequencer frames its records and adds them to the pending
/// batch under a mutex private to this journal. One flush pass on the
/// journal's own serial queue takes everything pending, writes it with one `write(2)`, calls `fdatasync` once
/// (policy `always`) and hands the pass's acknowledgements to the acknowledgement queue, which runs them in append
/// order while the flush queue goes straight on to the next pass: everything appended while an `fdatasync` ran (or
/// while earlier acknowledgements were being delivered) forms the next pass. With N writes outstanding a pass
/// therefore carries up to N records for the cost of one disk flush.
///
/// | Owner | State |
/// |---|---|
/// | `pending` mutex | the batch being filled, rotation markers, whether a pass is scheduled, a sticky failure |
/// | `queue` (flush queue) | the segment list, the open file, its size |
/// | `acknowledgements` (``AckDelivery``, its own queue) | acknowledgements not yet delivered; runs them |
///
/// A full disk (`ENOSPC`, `EDQUOT` from `write(2)` or from creating a segment) is waited out: the partial write is
/// truncated away, the records not written are held, unacknowledged, and retried every second, and
/// ``isOutOfSpace`` tells the store to refuse new writes meanwhile; once a retry writes and syncs them, they are
/// acknowledged and writes are accepted again. After any other write error, and after any `fdatasync` error, the
/// journal fails permanently: the state of the file is unknown (an `fdatasync` failure may have dropped dirty
/// pages, and retrying it would report success for data that is gone), so every pending and later record is
/// failed with the error and the store stops accepting writes until a restart recovers from what is on disk.
final class JournalWriter: Sendable {
    /// The journal directory.
    let directory: String
    /// When records are synced and acknowledged.
    let policy: FsyncPolicy
    /// A segment is closed and a new one started once it reaches this size (checked before each pass).
    let maxSegmentBytes: Int

    private let queue: DispatchQueue
    private let acknowledgements: AckDelivery
    private let pending: Mutex<PendingRecords>
    private let files: FlushState
    private let faults: JournalFaults?
    private let events: (@Sendable (JournalEvent) -> Void)?

    /// Opens the journal in `directory` for appending after `existing` segments (oldest first; the last one is
    /// appended to), creating the directory when needed.
    ///
    /// `events` hears of a full disk, its recovery and a permanent failure, on the journal's flush queue.
    init(directory: String, existing: [JournalSegment], policy: FsyncPolicy, maxSegmentBytes: Int,
         label: String, faults: JournalFaults? = nil, events: (@Sendable (JournalEvent) -> Void)? = nil)
        throws(JournalError)
    {
        try FileSystem.makeDirectories(directory)
        self.directory = directory
        self.policy = policy
        self.maxSegmentBytes = maxSegmentBytes
        queue = DispatchQueue(label: label)
        acknowledgements = AckDelivery(label: label + ".acks")
        pending = Mutex(PendingRecords())
        files = FlushState(segments: existing)
        self.faults = faults
        self.events = events
        if let last = existing.last {
            files.current = try FileDescriptor(opening: last.path, flags: O_WRONLY | O_APPEND)
            files.currentSize = try FileSystem.fileSize(last.path)
        }
        if case .interval(let milliseconds) = policy {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds))
            timer.setEventHandler { [self] in synchronizeIfDirty() }
            timer.resume()
            files.timer = timer
        }
    }

    // MARK: - Appending (any queue, normally the sequencer's)

    /// Appends one record; `ack` runs once it is durable (or failed), on the journal's acknowledgement queue.
    ///
    /// Records are written in the order of `append` calls; `sequence` must increase and names the segment a record
    /// starts.
    func append(sequence: UInt64, payload: [UInt8], ack: @escaping JournalAck) {
        var records = FramedRecords()
        records.append(sequence: sequence) { $0.bytes.append(contentsOf: payload) }
        append(records, ack: ack)
    }

    /// Appends every record of `records` with one lock and one copy; `ack` runs once they are all durable (or
    /// failed), on the journal's acknowledgement queue, after the acknowledgements of every earlier append.
    ///
    /// With no records, `ack` is a barrier: it runs once everything appended before it is durable. Writes that
    /// were rejected use it, so their rejection (which may describe data that is not durable yet) never overtakes
    /// the acknowledgement of a write applied before them.
    func append(_ records: FramedRecords, ack: @escaping JournalAck) {
        let outcome: (failure: JournalError?, schedule: Bool) = pending.withLock { state in
            if let failure = state.failure { return (failure, false) }
            state.open.add(records, ack: ack, spare: &state.spare)
            state.appendedBytes += records.bytes.count
            let schedule = !state.flushScheduled
            state.flushScheduled = true
            return (nil, schedule)
        }
        if let failure = outcome.failure {
            queue.async { [self] in acknowledgements.settle([ack], with: .failure(failure)) }
        } else if outcome.schedule {
            queue.async { [self] in flushPasses() }
        }
    }

    /// Whether the journal failed (or was closed) and rejects records.
    var hasFailed: Bool {
        pending.withLock { $0.failure != nil }
    }

    /// The full-disk error while records wait for space (new writes should be refused), else `nil`.
    var outOfSpace: JournalError? {
        pending.withLock { $0.outOfSpace }
    }

    /// Bytes appended since the journal was opened.
    var appendedBytes: Int {
        pending.withLock { $0.appendedBytes }
    }

    /// Closes the current segment after the records appended so far and starts `nextSequence.log`, which is
    /// created at once (even if no record follows) so that ``removeSegments(coveredThrough:)`` can tell that
    /// every older segment is complete. Used at snapshot cuts.
    func rotate(nextSequence: UInt64) {
        let schedule: Bool = pending.withLock { state in
            state.open.rotation = nextSequence
            state.sealed.append(state.open)
            state.open = PendingBatch()
            let schedule = !state.flushScheduled
            state.flushScheduled = true
            return schedule
        }
        if schedule { queue.async { [self] in flushPasses() } }
    }

    /// Deletes the segments whose records all have sequence numbers up to `sequence` (a snapshot covers them).
    func removeSegments(coveredThrough sequence: UInt64) {
        queue.async { [self] in
            var removed = false
            while files.segments.count > 1, files.segments[1].firstSequence <= sequence &+ 1 {
                let segment = files.segments.removeFirst()
                if (try? FileSystem.removeFile(segment.path)) != nil { removed = true }
            }
            if removed && policy != .none { try? FileSystem.synchronizeDirectory(directory) }
        }
    }

    /// Writes and syncs everything appended so far, stops the interval timer, closes the file and waits for the
    /// acknowledgements settled so far to run; later appends fail. Blocks the caller (shutdown and tests only;
    /// never from a completion).
    func close() throws(JournalError) {
        let result: Result<Void, JournalError> = queue.sync {
            flushPasses()
            files.timer?.cancel()
            files.timer = nil
            defer {
                files.current?.close()
                files.current = nil
            }
            if let failure = files.failure { return .failure(failure) }
            do throws(JournalError) {
                if files.dirty, let current = files.current, let segment = files.segments.last {
                    try current.synchronize(path: segment.path)
                    files.dirty = false
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        pending.withLock { $0.failure = $0.failure ?? .journalFailed(file: directory) }
        acknowledgements.waitUntilDelivered()
        try result.get()
    }

    /// Number of group commits so far (`fdatasync` calls that ended a flush pass).
    var groupCommits: Int {
        queue.sync { files.passSynchronizations }
    }

    // MARK: - Flush queue

    /// Runs passes until nothing is pending.
    private func flushPasses() {
        dispatchPrecondition(condition: .onQueue(queue))
        while true {
            let batches: [PendingBatch]? = pending.withLock { state in
                if state.open.isEmpty && state.sealed.isEmpty {
                    state.flushScheduled = false
                    return nil
                }
                var batches = state.sealed
                state.sealed = []
                if !state.open.isEmpty {
                    batches.append(state.open)
                    state.open = PendingBatch()
                }
                return batches
            }
            guard var batches else { return }
            runPass(batches)
            recycle(&batches[0].bytes)
        }
    }

    /// Hands the byte buffer of a written batch back for the next one, so that steady group commits do not
    /// regrow a fresh buffer on every pass.
    private func recycle(_ bytes: inout [UInt8]) {
        guard bytes.capacity <= PendingBatch.retainedCapacity else { return }
        var buffer: [UInt8] = []
        swap(&buffer, &bytes)
        buffer.removeAll(keepingCapacity: true)  // uniquely referenced now: keeps its storage
        pending.withLock { state in
            if state.spare.capacity < buffer.capacity { swap(&state.spare, &buffer) }
        }
    }

    /// Writes `batches` after any held for space, syncs, and settles the acknowledgements of what was written.
    private func runPass(_ batches: [PendingBatch]) {
        let batches = files.held + batches
        files.held = []
        var written = 0
        do throws(JournalError) {
            if let failure = files.failure { throw failure }
            for index in batches.indices {
                do throws(JournalError) {
                    try write(&files.partial, batch: batches[index])
                } catch where error.isOutOfSpace {
                    try holdForSpace(Array(batches[index...]), error: error)
                    break
                }
                files.partial = PartialBatch()
                written += 1
            }
            if policy == .always, files.dirty, let current = files.current, let segment = files.segments.last {
                if let errno = faults?.synchronize() { throw .systemCall("fdatasync", path: segment.path, errno: errno) }
                try current.synchronize(path: segment.path)
                files.dirty = false
                files.passSynchronizations += 1
            }
            acknowledgements.settle(batches[..<written].flatMap(\.acks), with: .success(()))
            if files.held.isEmpty { spaceFound() }
        } catch {
            fail(with: error)
            files.held = []
            acknowledgements.settle(batches.flatMap(\.acks), with: .failure(error))
        }
    }

    /// Writes one batch's records and makes its rotation; `progress` remembers what is done, so that a retry after
    /// a full disk neither writes the records twice nor skips the rotation.
    private func write(_ progress: inout PartialBatch, batch: PendingBatch) throws(JournalError) {
        if let first = batch.firstSequence, !progress.recordsWritten {
            try prepareSegment(firstSequence: first)
            guard let current = files.current, let segment = files.segments.last else {
                throw .journalFailed(file: directory)
            }
            if let errno = faults?.write() { throw .systemCall("write", path: segment.path, errno: errno) }
            try current.writeAll(batch.bytes, path: segment.path)
            files.currentSize += batch.bytes.count
            files.dirty = true
            progress.recordsWritten = true
        }
        if let next = batch.rotation { try startSegment(firstSequence: next) }
    }

    /// The disk is full: cuts the open segment back to its last whole record, keeps `batches` (unacknowledged) for
    /// a retry in a second, and tells the store to refuse writes. A failed cut is a permanent failure.
    private func holdForSpace(_ batches: [PendingBatch], error: JournalError) throws(JournalError) {
        if let current = files.current, let segment = files.segments.last {
            try current.truncate(to: files.currentSize, path: segment.path)
        }
        files.held = batches
        let entered: Bool = pending.withLock { state in
            defer { state.outOfSpace = error }
            return state.outOfSpace == nil
        }
        if entered { events?(.outOfSpace(error)) }
        queue.asyncAfter(deadline: .now() + .seconds(1)) { [self] in
            guard !files.held.isEmpty, files.failure == nil else { return }
            runPass([])
        }
    }

    /// Records that waited for space are durable: writes are accepted again.
    private func spaceFound() {
        let recovered: Bool = pending.withLock { state in
            defer { state.outOfSpace = nil }
            return state.outOfSpace != nil
        }
        if recovered { events?(.spaceRecovered) }
    }

    /// Makes sure a segment is open that may take a batch starting at `firstSequence`.
    private func prepareSegment(firstSequence: UInt64) throws(JournalError) {
        if files.current == nil || files.currentSize >= maxSegmentBytes {
            try startSegment(firstSequence: firstSequence)
        }
    }

    /// Syncs and closes the open segment (if any) and creates `firstSequence.log`.
    private func startSegment(firstSequence: UInt64) throws(JournalError) {
        if let current = files.current, let segment = files.segments.last {
            if files.currentSize == 0 && segment.firstSequence == firstSequence { return }
            if policy != .none && files.dirty { try current.synchronize(path: segment.path) }
            files.dirty = false
            current.close()
            files.current = nil
        }
        let segment = JournalSegment(directory: directory, firstSequence: firstSequence)
        files.current = try FileDescriptor(opening: segment.path, flags: O_WRONLY | O_CREAT | O_APPEND, mode: 0o644)
        files.currentSize = try FileSystem.fileSize(segment.path)
        if files.segments.last?.firstSequence != firstSequence { files.segments.append(segment) }
        if policy != .none { try FileSystem.synchronizeDirectory(directory) }
    }

    private func synchronizeIfDirty() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard files.dirty, files.failure == nil, let current = files.current, let segment = files.segments.last else {
            return
        }
        do throws(JournalError) {
            try current.synchronize(path: segment.path)
            files.dirty = false
        } catch {
            fail(with: error)
        }
    }

    private func fail(with error: JournalError) {
        let first = files.failure == nil
        files.failure = files.failure ?? error
        pending.withLock { state in
            state.failure = state.failure ?? error
            state.outOfSpace = nil
        }
        if first { events?(.failed(error)) }
    }
}

/// How much of a batch a pass wrote before the disk filled.
private struct PartialBatch {
    /// Its records are in the segment (only its rotation is left).
    var recordsWritten = false
}

/// State owned by the journal's flush queue.
private final class FlushState: @unchecked Sendable {
    // Touched only on JournalWriter.queue (and in JournalWriter.init before the queue is used).
    var segments: [JournalSegment]
    var current: FileDescriptor?
    var currentSize = 0
    /// Whether bytes were written since the last `fdatasync`.
    var dirty = false
    var failure: JournalError?
    /// Batches not written because the disk is full, oldest first; retried before anything newer.
    var held: [PendingBatch] = []
    /// How far the first held batch got.
    var partial = PartialBatch()
    var timer: (any DispatchSourceTimer)?
    /// `fdatasync` calls made at the end of flush passes (group commits), for tests and metrics.
    var passSynchronizations = 0

    init(segments: [JournalSegment]) {
        self.segments = segments
    }
}
