import COpenSSL

/// Reads OpenSSL's per-thread error queue.
///
/// OpenSSL records failures in a queue private to the calling thread, and `SSL_get_error` only tells the
/// truth if the queue was empty before the call, so every session operation starts with ``clear()``.
enum OpenSSLErrorQueue {
    /// What was drained from the queue: the human-readable entries and the reason code of each.
    struct Drained {
        /// Entries formatted by `ERR_error_string_n`, oldest first, joined by "; ", or `fallback` if the queue was empty.
        var message: String
        /// `ERR_GET_REASON` of each entry, oldest first.
        var reasons: [Int32]
    }

    /// Longest message kept per entry; OpenSSL's own lines are well under this.
    private static let maxEntryLength = 256
    /// Most entries kept; a queue longer than this is a cascade whose first entries say enough.
    private static let maxEntries = 8

    /// Discards whatever earlier calls on this thread left in the queue.
    static func clear() {
        ERR_clear_error()
    }

    /// Empties the queue and returns its entries; `fallback` names the failure if the queue held nothing.
    static func drain(fallback: @autoclosure () -> String) -> Drained {
        var entries: [String] = []
        var reasons: [Int32] = []
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: maxEntryLength) { line in
            guard let base = line.baseAddress else { return }
            while true {
                let code = ERR_get_error()
                if code == 0 { break }
                guard entries.count < maxEntries else { continue }
                line.initialize(repeating: 0)
                ERR_error_string_n(code, base, maxEntryLength)
                entries.append(String(cString: base))
                reasons.append(ERR_GET_REASON(code))
            }
        }
        return Drained(message: entries.isEmpty ? fallback() : entries.joined(separator: "; "), reasons: reasons)
    }
}
