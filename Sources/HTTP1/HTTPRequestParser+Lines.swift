import Primitives

/// Finding CRLF-terminated lines at the front of the buffer.
extension HTTPRequestParser {
    /// What a scan for the end of the current line found.
    enum LineScan {
        case line(length: Int)
        case needMoreBytes
        case tooLong
        case malformed(String)
    }

    /// The length (without CRLF) of the complete line at the front of the buffer, or nil if it has not fully
    /// arrived yet.
    ///
    /// Bytes are examined strictly in order and each one at most once across calls, so a stream yields the
    /// same outcome however it is split. With `checkingMethod`, bytes before the first space must be token
    /// characters, so that a peer speaking something else (TLS on the plain port) fails at once instead of
    /// filling the line budget.
    /// - Throws: `tooLong` once the line exceeds `maxLength`; 400 for a bare CR or LF or a bad method byte.
    mutating func scanLine(maxLength: Int, tooLong: HTTPParseError, checkingMethod: Bool = false)
        throws(HTTPParseError) -> Int?
    {
        var index = lineScanOffset
        var methodEnded = self.methodEnded
        let outcome = buffer.withUnsafeReadableBytes { bytes -> LineScan in
            while index < bytes.count {
                let byte = bytes[index]
                if byte == ASCII.cr {
                    guard index + 1 < bytes.count else { return .needMoreBytes }
                    return bytes[index + 1] == ASCII.lf ? .line(length: index) : .malformed("bare CR in a line")
                }
                if byte == ASCII.lf { return .malformed("line ends with a bare LF instead of CRLF") }
                if index >= maxLength { return .tooLong }
                if checkingMethod && !methodEnded {
                    if byte == ASCII.space {
                        methodEnded = true
                    } else if !ASCII.isTokenCharacter(byte) {
                        return .malformed("invalid method")
                    }
                }
                index += 1
            }
            return .needMoreBytes
        }
        lineScanOffset = index
        self.methodEnded = methodEnded
        switch outcome {
        case .line(let length): return length
        case .needMoreBytes: return nil
        case .tooLong: throw tooLong
        case .malformed(let reason): throw .badRequest(reason)
        }
    }

    /// Calls `body` with the first `length` buffered bytes (a line found by ``scanLine(maxLength:tooLong:checkingMethod:)``).
    func withLine<Value>(
        length: Int, _ body: (UnsafeRawBufferPointer) throws(HTTPParseError) -> Value
    ) throws(HTTPParseError) -> Value {
        try buffer.withUnsafeReadableBytes { bytes in
            Result { () throws(HTTPParseError) -> Value in
                try body(UnsafeRawBufferPointer(rebasing: bytes.prefix(length)))
            }
        }.get()
    }

    /// Consumes a line of `length` bytes and its CRLF, and resets the scan for the next line.
    mutating func consumeLine(length: Int) {
        buffer.consume(length + 2)
        lineScanOffset = 0
        methodEnded = false
    }
}
