/// Writes a body in the chunked transfer coding (RFC 9112 §7.1), for responses sent with
/// `Transfer-Encoding: chunked`.
public enum HTTPChunkedEncoding {
    /// `bytes` as one chunk: the size in hexadecimal, CRLF, the bytes, CRLF.
    ///
    /// Empty input gives an empty array, because an empty chunk would be the last chunk and end the body.
    public static func encodeChunk(_ bytes: some Collection<UInt8>) -> [UInt8] {
        guard !bytes.isEmpty else { return [] }
        let size = String(bytes.count, radix: 16).utf8
        var chunk: [UInt8] = []
        chunk.reserveCapacity(size.count + bytes.count + 4)
        chunk.append(contentsOf: size)
        chunk.append(contentsOf: ASCII.crlf)
        chunk.append(contentsOf: bytes)
        chunk.append(contentsOf: ASCII.crlf)
        return chunk
    }

    /// The last chunk with no trailers, `0 CRLF CRLF`, which ends a chunked body.
    public static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}
