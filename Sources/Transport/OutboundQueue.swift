import Primitives

#if canImport(Glibc)
import Glibc
#endif

/// A FIFO of chunks waiting to be written, with the offset already written of the first one.
///
/// A ring of retained chunk references in plain memory: appending a shared fan-out chunk costs one retain and a
/// store (no array uniqueness check, no optional boxing), and `writev` points straight into the chunks. The ring
/// starts small and doubles, and is kept when drained, so a connection that takes a hundred frames a pass does not
/// grow a ring again each pass; ``releaseSpareCapacity()`` (the loop's sweep) frees a drained ring larger than
/// ``keptCapacity``, so an idle connection holds at most that many slots. Owned by the connection's loop.
struct OutboundQueue: ~Copyable {
    /// Slots of the first ring.
    static let initialCapacity: Int32 = 2
    /// A drained ring up to this many slots is kept for good; a larger one until ``releaseSpareCapacity()``.
    static let keptCapacity: Int32 = 64

    // The ring's positions and the head's offset are 32-bit, so the queue takes 32 bytes of every connection: a
    // queue holds far fewer than 2^31 chunks (its connection is cut off at the hard limit, 8 MiB by default), and
    // a chunk is one message, far below 2 GiB.
    private var slots: UnsafeMutablePointer<Unmanaged<ByteChunk>>?
    /// Slots of the ring: a power of two (or 0 before the first chunk).
    private(set) var capacity: Int32 = 0
    /// Position of the front chunk.
    private var head: Int32 = 0
    private var count: Int32 = 0
    /// Bytes of the first chunk already written.
    private var writtenOfHead: Int32 = 0
    /// Unwritten bytes in the queue.
    private(set) var pendingBytes = 0

    /// Bytes of the first chunk already written.
    var headOffset: Int { Int(writtenOfHead) }

    init() {}

    deinit {
        if let slots {
            for index in 0..<count { slots[Int((head + index) & (capacity - 1))].release() }
            slots.deallocate()
        }
    }

    var isEmpty: Bool { count == 0 }

    /// Bytes queued behind the chunk at the front (the one in flight). The slow-consumer limit
    /// applies to this backlog, so one large message (a 16 MiB echo) never trips it by itself.
    var backlogBytes: Int {
        guard let slots, count > 0 else { return 0 }
        return pendingBytes - (slots[Int(head)].bytes.count - headOffset)
    }

    /// Queues `chunk` (retained until written).
    mutating func append(_ chunk: ByteChunk) {
        let size = chunk.count
        guard size > 0 else { return }
        if count == capacity { grow() }
        guard let slots else { return }
        slots[Int((head + count) & (capacity - 1))] = Unmanaged.passRetained(chunk)
        count += 1
        pendingBytes += size
    }

    /// Chunks up to this size are copied into the loop's staging buffer when several are queued.
    static let copyLimit = 512

    /// Fills `iovecs` from the front of the queue and returns how many entries were used.
    ///
    /// When more than one chunk is queued, each run of chunks of at most ``copyLimit`` bytes is copied into
    /// `staging` and goes out as one entry: the kernel's TCP send costs about 40 ns per `iovec` on top of the
    /// bytes, more than copying a small chunk, so a fan-out pass with a hundred 90-byte frames for one subscriber
    /// costs 4 µs less of kernel time per `writev` (docs/benchmarks.md, "Small frames gathered into one buffer per
    /// `writev`").
    /// The bytes and their order are the same either way; a partial write leaves the chunks as they were, and the
    /// next fill copies what is left again.
    func fill(_ iovecs: UnsafeMutablePointer<iovec>, capacity limit: Int,
              staging: UnsafeMutableRawBufferPointer) -> Int
    {
        guard let slots, limit > 0 else { return 0 }
        // A lone chunk goes out from its own bytes: copying it would save no `iovec`.
        let stagingBase = count > 1 ? staging.baseAddress : nil
        var used = 0
        var staged = 0
        var runOpen = false
        for index in 0..<Int(count) {
            let chunk = slots[(Int(head) + index) & (Int(capacity) - 1)].bytes
            let skip = index == 0 ? headOffset : 0
            let source = chunk.base + skip
            let length = chunk.count - skip
            if let stagingBase, length <= Self.copyLimit, staged + length <= staging.count {
                if !runOpen {
                    guard used < limit else { break }
                    iovecs[used] = iovec(iov_base: stagingBase + staged, iov_len: 0)
                    used += 1
                    runOpen = true
                }
                (stagingBase + staged).copyMemory(from: source, byteCount: length)
                staged += length
                iovecs[used - 1].iov_len += length
            } else {
                guard used < limit else { break }
                iovecs[used] = iovec(iov_base: UnsafeMutableRawPointer(mutating: source), iov_len: length)
                used += 1
                runOpen = false
            }
        }
        return used
    }

    /// Drops `written` bytes from the front.
    mutating func consume(_ written: Int) {
        guard let slots else { return }
        var remaining = written
        pendingBytes -= written
        while remaining > 0, count > 0 {
            let front = slots[Int(head)]
            let left = front.bytes.count - headOffset
            guard remaining >= left else {
                writtenOfHead += Int32(truncatingIfNeeded: remaining)
                return
            }
            remaining -= left
            front.release()
            head = (head + 1) & (capacity - 1)
            count -= 1
            writtenOfHead = 0
        }
        if count == 0 { drained() }
    }

    /// Frees the ring when it is drained and larger than ``keptCapacity`` (a connection idle since a burst).
    mutating func releaseSpareCapacity() {
        guard count == 0, capacity > Self.keptCapacity else { return }
        slots?.deallocate()
        slots = nil
        capacity = 0
    }

    /// Drops every chunk not yet started, keeping a partly written head so framing stays intact.
    mutating func discardUnstarted() {
        guard let slots else { return }
        let keep: Int32 = count > 0 && writtenOfHead > 0 ? 1 : 0
        for index in keep..<count {
            let chunk = slots[Int((head + index) & (capacity - 1))]
            pendingBytes -= chunk.bytes.count
            chunk.release()
        }
        count = keep
        if count == 0 { drained() }
    }

    /// Doubles the ring (allocating the first one), keeping the chunks in order from slot 0.
    private mutating func grow() {
        let newCapacity = capacity == 0 ? Self.initialCapacity : capacity * 2
        let grown = UnsafeMutablePointer<Unmanaged<ByteChunk>>.allocate(capacity: Int(newCapacity))
        if let slots {
            for index in 0..<count { grown[Int(index)] = slots[Int((head + index) & (capacity - 1))] }
            slots.deallocate()
        }
        slots = grown
        capacity = newCapacity
        head = 0
    }

    /// Everything was written: the ring starts again at its first slot.
    private mutating func drained() {
        head = 0
        writtenOfHead = 0
    }
}

private extension Unmanaged<ByteChunk> {
    /// The chunk's bytes, read without taking a reference count (an atomic operation per chunk on the hot path):
    /// the queue holds every chunk in it until the chunk is consumed.
    var bytes: (base: UnsafeRawPointer, count: Int) {
        _withUnsafeGuaranteedRef { ($0.baseAddress, $0.count) }
    }
}
