/// A key prepared for comparison with many stored keys, as in a binary search: its bytes are fetched and its
/// integer value parsed once per search instead of once per comparison.
///
/// Valid only inside ``Key/withProbe(_:)``, which keeps the bytes alive.
struct KeyProbe {
    /// The probed key's UTF-8 bytes.
    let bytes: UnsafeBufferPointer<UInt8>
    /// Its integer value under the JS rule, `nil` when it is not integer-like.
    let integer: Int64?

    /// Order of `stored` relative to the probed key (§7.1): negative when `stored` sorts first.
    @inline(__always)
    func order(of stored: borrowing Key) -> Int {
        stored.string.withUTF8Bytes { other in
            if other.baseAddress == bytes.baseAddress && other.count == bytes.count { return 0 }  // the same storage
            return Key.compare(other, Key.integer(other), bytes, integer)
        }
    }
}

extension Key {
    /// Calls `body` with this key prepared for many comparisons.
    @inline(__always)
    func withProbe<R>(_ body: (KeyProbe) throws -> R) rethrows -> R {
        try string.withUTF8Bytes { bytes in try body(KeyProbe(bytes: bytes, integer: Key.integer(bytes))) }
    }
}
