import Primitives

/// A FIFO of chunks waiting to be written, with the offset already written of the first one.
///
/// A ring of chunk references: appending a shared fan-out chunk costs one retain, and `writev`
/// points straight into the chunks. Owned by the connection's loop.
struct OutboundQueue {
    private var chunks: [ByteChunk?] = []
    private var head = 0
    /// Bytes of the first chunk already written.
    private(set) var headOffset = 0
    /// Unwritten bytes in the queue.
    private(set) var pendingBytes = 0

    var isEmpty: Bool { head == chunks.count }

    mutating func append(_ chunk: ByteChunk) {
        guard chunk.count > 0 else { return }
        chunks.append(chunk)
        pendingBytes += chunk.count
    }

    /// Fills `iovecs` from the front of the queue and returns how many entries were used.
    func fill(_ iovecs: UnsafeMutablePointer<iovec>, capacity: Int) -> Int {
        var used = 0
        var index = head
        while index < chunks.count && used < capacity {
            if let chunk = chunks[index] {
                let skip = index == head ? headOffset : 0
                iovecs[used] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: chunk.baseAddress + skip),
                    iov_len: chunk.count - skip)
                used += 1
            }
            index += 1
        }
        return used
    }

    /// Drops `written` bytes from the front.
    mutating func consume(_ written: Int) {
        var remaining = written
        pendingBytes -= written
        while remaining > 0, head < chunks.count, let chunk = chunks[head] {
            let left = chunk.count - headOffset
            if remaining >= left {
                remaining -= left
                chunks[head] = nil
                head += 1
                headOffset = 0
            } else {
                headOffset += remaining
                remaining = 0
            }
        }
        compact()
    }

    /// Drops every chunk not yet started, keeping a partly written head so framing stays intact.
    mutating func discardUnstarted() {
        let keep = head < chunks.count && headOffset > 0 ? 1 : 0
        for index in (head + keep)..<chunks.count {
            pendingBytes -= chunks[index]?.count ?? 0
        }
        chunks.removeSubrange((head + keep)...)
        compact()
    }

    private mutating func compact() {
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.capacity <= 1024)
            head = 0
        } else if head > 64 && head * 2 > chunks.count {
            chunks.removeSubrange(0..<head)
            head = 0
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
