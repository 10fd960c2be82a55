/// Local failures of permessage-deflate (RFC 7692) that are not the peer's fault.
///
/// Peer errors (undecodable data, inflating past the message limit) are ``WebSocket/WebSocketProtocolError`` values
/// so they map to close codes in one place; this type covers zlib refusing to start or failing internally.
public enum DeflateError: Error, Hashable, Sendable {
    /// zlib returned this status (`Z_MEM_ERROR`, `Z_STREAM_ERROR`, …).
    case zlib(code: Int32)
}
