import CEpoll
import Dispatch

/// Gives the C allocator's free memory back to the kernel now and then.
///
/// glibc keeps what is freed in its arenas (one per thread that allocated, up to eight per core) for reuse, and
/// returns only the top of each to the kernel. A server whose connections come and go so holds the free memory of
/// its busiest moments as resident memory: over a soak of 1,000,000 connections, RSS grew 11%, and 70% of the
/// heap's growth was free memory the allocator kept (docs/benchmarks.md, "Soak: 1,000,000 connections"). Every
/// minute, when the allocator holds more than 1 MiB free, `malloc_trim(0)` releases the free whole pages of every
/// arena.
public final class AllocatorTrim: @unchecked Sendable {  // the timer is set once, in `init`, and only cancelled
    static let intervalSeconds = 60.0
    static let freeBytesThreshold = 1 << 20

    private let timer: any DispatchSourceTimer

    /// Starts trimming.
    public init() {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "canopy.allocator-trim", qos: .utility))
        timer.schedule(deadline: .now() + Self.intervalSeconds, repeating: Self.intervalSeconds, leeway: .seconds(5))
        timer.setEventHandler {
            guard canopy_heap_figures().fordblks > Self.freeBytesThreshold else { return }
            _ = malloc_trim(0)
        }
        timer.resume()
    }

    /// Stops trimming.
    public func stop() {
        timer.cancel()
    }
}
