import COpenSSL

extension TLSContext {
    /// Finds "http/1.1" in a ClientHello's ALPN list (RFC 7301 §3.1: a sequence of one-byte-length-prefixed,
    /// non-empty names) and returns the offset of its first name byte, or `nil` if it is absent or the list is
    /// malformed (a truncated or empty entry ends the search).
    package static func offsetOfApplicationProtocol(in list: UnsafeBufferPointer<UInt8>) -> Int? {
        let wanted = applicationProtocol
        var index = 0
        while index < list.count {
            let length = Int(list[index])
            let start = index + 1
            guard length > 0, length <= list.count - start else { return nil }
            if length == wanted.count && list[start..<(start + length)].elementsEqual(wanted) {
                return start
            }
            index = start + length
        }
        return nil
    }
}

/// OpenSSL's ALPN selection callback for server contexts (`SSL_CTX_set_alpn_select_cb`): picks "http/1.1" when
/// the client offers it and otherwise continues without ALPN (`SSL_TLSEXT_ERR_NOACK`) rather than failing the
/// handshake, because HTTP/1.1 is all Canopy speaks either way.
///
/// `out` must point into the client's list, which OpenSSL keeps alive for the duration of the handshake.
func selectApplicationProtocol(
    _ ssl: OpaquePointer?,
    _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?,
    _ clientList: UnsafePointer<UInt8>?,
    _ clientListLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let out, let outLength, let clientList,
        let offset = TLSContext.offsetOfApplicationProtocol(
            in: UnsafeBufferPointer(start: clientList, count: Int(clientListLength)))
    else {
        return SSL_TLSEXT_ERR_NOACK
    }
    out.pointee = clientList + offset
    outLength.pointee = UInt8(TLSContext.applicationProtocol.count)
    return SSL_TLSEXT_ERR_OK
}
