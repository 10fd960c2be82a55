/// What an instance of a Swift class costs on the heap: its size as the runtime allocates it, and the glibc malloc
/// chunk that allocation takes.
public enum InstanceFootprint {
    /// The instance size in bytes, header included, read from the class's metadata (the Swift ABI's class metadata
    /// without Objective-C interop: kind, superclass, flags, instance address point, then the 32-bit instance size).
    public static func instanceSize(of type: AnyClass) -> Int {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        return Int(metadata.load(fromByteOffset: 24, as: UInt32.self))
    }

    /// The glibc malloc chunk a request of `bytes` takes on x86-64: the request and an 8-byte size field, rounded up
    /// to 16 bytes, at least 32.
    public static func mallocChunk(forRequest bytes: Int) -> Int {
        max(32, (bytes + 8 + 15) & ~15)
    }

    /// The malloc chunk an instance of `type` takes.
    public static func chunk(of type: AnyClass) -> Int {
        mallocChunk(forRequest: instanceSize(of: type))
    }
}
