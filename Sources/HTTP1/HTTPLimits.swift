/// Size limits the request parser enforces, each mapped to the status a peer receives when it exceeds them.
///
/// Every limit is checked as soon as the parser can know it is exceeded, before the offending bytes are
/// buffered in full, so a hostile peer cannot make the server hold more than these amounts per connection.
/// All values must be positive.
public struct HTTPLimits: Sendable, Equatable {
    /// Default for ``maxRequestLineBytes``: 8 KiB, the minimum RFC 9112 §3 recommends supporting.
    public static let defaultMaxRequestLineBytes = 8192
    /// Default for ``maxHeaderBytes``: 16 KiB, enough for large cookies and bearer tokens.
    public static let defaultMaxHeaderBytes = 16384
    /// Default for ``maxBodyBytes``: 16 MiB: room for large REST writes while bounding what one
    /// connection can make the server hold in memory.
    public static let defaultMaxBodyBytes = 16 * 1024 * 1024
    /// Default for ``maxHeaderCount``: 100 fields.
    public static let defaultMaxHeaderCount = 100

    /// Longest request line, excluding its CRLF; longer lines fail with 414 URI Too Long.
    public var maxRequestLineBytes: Int
    /// Largest field section, counting each field line with its CRLF; larger ones fail with
    /// 431 Request Header Fields Too Large. Chunked trailers get a budget of the same size.
    public var maxHeaderBytes: Int
    /// Largest request body after chunked decoding; larger bodies fail with 413 Content Too Large, at once
    /// when `Content-Length` declares it and as soon as a chunk size crosses it otherwise.
    public var maxBodyBytes: Int
    /// Most header fields in one request; more fail with 431 Request Header Fields Too Large.
    public var maxHeaderCount: Int

    /// Creates limits; every argument defaults to the documented `default…` constant.
    public init(
        maxRequestLineBytes: Int = defaultMaxRequestLineBytes,
        maxHeaderBytes: Int = defaultMaxHeaderBytes,
        maxBodyBytes: Int = defaultMaxBodyBytes,
        maxHeaderCount: Int = defaultMaxHeaderCount
    ) {
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderCount = maxHeaderCount
    }
}
