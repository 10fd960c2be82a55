import CEpoll
import Glibc
import Primitives

/// The process's memory as the kernel and the C allocator see it, read at scrape time: resident memory, and how
/// much of the allocator's heap is in use or free. Together they tell apart memory the server holds (in use grows)
/// from memory the allocator keeps after it was freed (resident grows, in use does not).
struct ProcessFigures {
    /// Resident memory (`VmRSS`), bytes; `nil` when `/proc/self/status` cannot be read.
    let residentBytes: Int?
    /// Bytes of the allocator's heap handed out and not freed (`mallinfo2().uordblks`, every arena).
    let heapInUseBytes: Int
    /// Bytes the allocator holds free in its arenas (`fordblks`): freed memory not given back to the kernel.
    let heapFreeBytes: Int
    /// Bytes in blocks the allocator mapped on its own for large requests (`hblkhd`).
    let heapMappedBytes: Int

    init() {
        let heap = canopy_heap_figures()
        heapInUseBytes = Int(heap.uordblks)
        heapFreeBytes = Int(heap.fordblks)
        heapMappedBytes = Int(heap.hblkhd)
        residentBytes = ProcessMemory.of(pid: getpid())?.resident
    }

    /// Prometheus text lines for these figures (`process_resident_memory_bytes` is the standard name).
    var exposition: [UInt8] {
        var text = ""
        func add(_ name: String, _ value: Int) {
            text += "# TYPE \(name) gauge\n\(name) \(value)\n"
        }
        if let residentBytes { add("process_resident_memory_bytes", residentBytes) }
        add("canopy_heap_in_use_bytes", heapInUseBytes)
        add("canopy_heap_free_bytes", heapFreeBytes)
        add("canopy_heap_mapped_bytes", heapMappedBytes)
        return Array(text.utf8)
    }
}
