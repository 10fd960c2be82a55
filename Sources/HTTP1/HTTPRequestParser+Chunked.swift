/// Parsing chunk-size lines of the chunked transfer coding.
extension HTTPRequestParser {
    /// Parses `chunk-size [ chunk-ext ]` (RFC 9112 §7.1): hexadecimal digits, then optionally whitespace and
    /// extensions starting with `;`, which are checked for control characters and otherwise ignored (§7.1.1).
    ///
    /// - Parameter maxSize: the body bytes still allowed; a larger size fails at once with 413, before any
    ///   chunk data is read, which also rules out overflow.
    static func parseChunkSize(_ line: UnsafeRawBufferPointer, maxSize: Int) throws(HTTPParseError) -> Int {
        var index = line.startIndex
        var size = 0
        while index < line.endIndex, let digit = ASCII.hexDigitValue(line[index]) {
            let (shifted, overflowA) = size.multipliedReportingOverflow(by: 16)
            let (sum, overflowB) = shifted.addingReportingOverflow(digit)
            guard !overflowA && !overflowB && sum <= maxSize else { throw .payloadTooLarge }
            size = sum
            index += 1
        }
        guard index > line.startIndex else { throw .badRequest("invalid chunk size") }
        let extensions = line[index...].drop(while: ASCII.isWhitespace)
        guard line[index...].isEmpty || extensions.first == ASCII.semicolon else {
            throw .badRequest("invalid chunk size")
        }
        guard extensions.allSatisfy(ASCII.isFieldValueCharacter) else { throw .badRequest("invalid chunk extension") }
        return size
    }
}
