/// Writes status lines and header fields (RFC 9112 §4, §5) for responses.
enum HTTPHeadEncoding {
    /// Appends `HTTP/1.1 code reason CRLF`, each field as `name: value CRLF`, then, if `contentLength` is
    /// given, a `Content-Length` field. The empty line that ends the head is not written.
    ///
    /// CR, LF and NUL in names, values or the reason phrase are replaced by SP, so a value that came from a
    /// peer can never split the response (RFC 9110 §5.5).
    static func append(status: HTTPStatus, headers: HTTPHeaders, contentLength: Int?, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(status.code).utf8)
        bytes.append(ASCII.space)
        appendSanitized(status.reasonPhrase, to: &bytes)
        bytes.append(contentsOf: ASCII.crlf)
        for field in headers {
            appendSanitized(field.name, to: &bytes)
            bytes.append(contentsOf: [ASCII.colon, ASCII.space])
            appendSanitized(field.value, to: &bytes)
            bytes.append(contentsOf: ASCII.crlf)
        }
        if let contentLength {
            bytes.append(contentsOf: "Content-Length: ".utf8)
            bytes.append(contentsOf: String(contentLength).utf8)
            bytes.append(contentsOf: ASCII.crlf)
        }
    }

    /// Appends the UTF-8 of `text` with CR, LF and NUL replaced by SP.
    private static func appendSanitized(_ text: String, to bytes: inout [UInt8]) {
        let isUnsafe = { (byte: UInt8) in byte == ASCII.cr || byte == ASCII.lf || byte == 0 }
        guard text.utf8.contains(where: isUnsafe) else { return bytes.append(contentsOf: text.utf8) }
        for byte in text.utf8 { bytes.append(isUnsafe(byte) ? ASCII.space : byte) }
    }

    /// A capacity guess for a head with these fields, to avoid regrowing the array while encoding.
    static func estimatedSize(status: HTTPStatus, headers: HTTPHeaders) -> Int {
        headers.reduce(32 + status.reasonPhrase.utf8.count) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }
}
