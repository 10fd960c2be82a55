/// Parsing the request line and header fields, and deciding how the body is framed.
extension HTTPRequestParser {
    /// How the length of a request body is determined (RFC 9112 §6.3).
    enum BodyFraming: Equatable {
        case none
        case contentLength(Int)
        case chunked
    }

    /// Methods whose requests carry a body, so that leaving out its length is a 411 rather than an empty body.
    static let methodsRequiringLength: Set<String> = ["POST", "PUT", "PATCH"]

    /// Parses `method SP request-target SP HTTP-version` (RFC 9112 §3), with exactly one space between parts.
    static func parseRequestLine(_ line: UnsafeRawBufferPointer) throws(HTTPParseError) -> RequestLine {
        guard let firstSpace = line.firstIndex(of: ASCII.space), let lastSpace = line.lastIndex(of: ASCII.space),
            firstSpace != lastSpace
        else { throw .badRequest("malformed request line") }
        let methodBytes = line[..<firstSpace]
        guard !methodBytes.isEmpty, methodBytes.allSatisfy(ASCII.isTokenCharacter) else {
            throw .badRequest("invalid method")
        }
        // Any visible ASCII is accepted in the target: clients such as curl send `"` and `{` unencoded
        // in Realtime Database queries (`orderBy="$key"`), and the router decodes and validates paths.
        let targetBytes = line[(firstSpace + 1)..<lastSpace]
        guard !targetBytes.isEmpty, targetBytes.allSatisfy(ASCII.isVisible) else {
            throw .badRequest("invalid request target")
        }
        let version = try parseVersion(UnsafeRawBufferPointer(rebasing: line[(lastSpace + 1)...]))
        let method = String(decoding: methodBytes, as: UTF8.self)
        let target = String(decoding: targetBytes, as: UTF8.self)
        guard isAcceptableTarget(target, for: method) else { throw .badRequest("invalid request target") }
        return RequestLine(method: method, target: target, version: version)
    }

    /// Parses `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3); only 1.0 and 1.1 are supported.
    static func parseVersion(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> HTTPVersion {
        let prefix = "HTTP/".utf8
        guard bytes.count == prefix.count + 3, bytes.starts(with: prefix), bytes[prefix.count + 1] == 0x2E,
            case let major = bytes[prefix.count], case let minor = bytes[prefix.count + 2],
            (0x30...0x39).contains(major), (0x30...0x39).contains(minor)
        else { throw .badRequest("malformed HTTP version") }
        let version = HTTPVersion(major: Int(major - 0x30), minor: Int(minor - 0x30))
        guard version == .http1_1 || version == .http1_0 else { throw .versionNotSupported }
        return version
    }

    /// Whether the target has a form allowed for the method (RFC 9112 §3.2): origin form (`/…`) and absolute
    /// form (`scheme://…`) for any method, authority form only for CONNECT, asterisk form only for OPTIONS.
    static func isAcceptableTarget(_ target: String, for method: String) -> Bool {
        if method == "CONNECT" { return true }
        if target == "*" { return method == "OPTIONS" }
        if target.utf8.first == ASCII.slash { return true }
        guard let afterScheme = HTTPRequestHead.afterSchemeSeparator(target) else { return false }
        let scheme = target.utf8.prefix(target.utf8.count - afterScheme.utf8.count - 3)
        guard let first = scheme.first, ASCII.lowercased(first) >= 0x61, ASCII.lowercased(first) <= 0x7A else {
            return false
        }
        // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 §3.1)
        return scheme.allSatisfy { byte in
            let letter = ASCII.lowercased(byte)
            return (letter >= 0x61 && letter <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                || byte == 0x2B || byte == 0x2D || byte == 0x2E
        }
    }

    /// Parses `field-name ":" OWS field-value OWS` (RFC 9112 §5, RFC 9110 §5.5).
    static func parseFieldLine(_ line: UnsafeRawBufferPointer) throws(HTTPParseError) -> (name: String, value: String) {
        if let first = line.first, ASCII.isWhitespace(first) {
            throw .badRequest("obsolete line folding in header fields")  // RFC 9112 §5.2
        }
        guard let colon = line.firstIndex(of: ASCII.colon) else { throw .badRequest("header field without a colon") }
        let name = line[..<colon]
        guard !name.isEmpty else { throw .badRequest("empty header field name") }
        guard name.allSatisfy(ASCII.isTokenCharacter) else {
            if let last = name.last, ASCII.isWhitespace(last) {
                throw .badRequest("whitespace between header field name and colon")  // RFC 9112 §5.1
            }
            throw .badRequest("invalid header field name")
        }
        let value = ASCII.trimmingWhitespace(line[(colon + 1)...])
        guard value.allSatisfy(ASCII.isFieldValueCharacter) else {
            throw .badRequest("invalid character in header field value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// Builds the head once the field section is complete, validates it and prepares for the body.
    ///
    /// - Returns: the event to hand out now, or nil to go on parsing the body.
    mutating func finishHead(_ requestLine: RequestLine) throws(HTTPParseError) -> HTTPParserEvent? {
        let headers = fields
        fields = HTTPHeaders()
        let hostCount = headers.values(for: "Host").count
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0.
        if hostCount > 1 || (hostCount == 0 && requestLine.version == .http1_1) {
            throw .badRequest("missing or repeated Host header field")
        }
        let framing = try Self.bodyFraming(of: requestLine, headers: headers, limits: limits)
        let head = HTTPRequestHead(
            method: requestLine.method, target: requestLine.target, version: requestLine.version, headers: headers)
        switch framing {
        case .none, .contentLength(0):
            return complete(head)
        case .contentLength(let length):
            body.reserveCapacity(min(length, Self.maxReservedBodyBytes))
            state = .fixedLengthBody(head, remaining: length)
        case .chunked:
            state = .chunkSizeLine(head)
        }
        // RFC 9110 §10.1.1: a 100-continue expectation in an HTTP/1.0 request is ignored.
        if head.version == .http1_1 && headers.containsToken("100-continue", in: "Expect") {
            return .expectContinue(head)
        }
        return nil
    }

    /// Decides the body framing from `Transfer-Encoding` and `Content-Length` (RFC 9112 §6).
    ///
    /// Ambiguous framing is refused rather than resolved, since two parsers resolving it differently is how
    /// requests are smuggled (RFC 9112 §11.2).
    static func bodyFraming(
        of requestLine: RequestLine, headers: HTTPHeaders, limits: HTTPLimits
    ) throws(HTTPParseError) -> BodyFraming {
        let hasContentLength = headers.contains(name: "Content-Length")
        if headers.contains(name: "Transfer-Encoding") {
            // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 means faulty framing.
            guard requestLine.version == .http1_1 else {
                throw .badRequest("Transfer-Encoding is not allowed in HTTP/1.0")
            }
            // RFC 9112 §6.3: both fields "ought to be handled as an error".
            guard !hasContentLength else { throw .badRequest("both Content-Length and Transfer-Encoding") }
            let codings = headers.listElements(for: "Transfer-Encoding").filter { !$0.isEmpty }
            guard !codings.isEmpty else { throw .badRequest("empty Transfer-Encoding") }
            guard codings.allSatisfy({ ASCII.equalIgnoringCase($0, "chunked".utf8) }) else {
                throw .notImplemented("only the chunked transfer coding is supported")  // RFC 9112 §6.1
            }
            guard codings.count == 1 else { throw .badRequest("chunked applied more than once") }
            return .chunked
        }
        if hasContentLength {
            return .contentLength(try contentLength(in: headers, limits: limits))
        }
        guard !methodsRequiringLength.contains(requestLine.method) else { throw .lengthRequired }
        return .none
    }

    /// The body length from `Content-Length` (RFC 9110 §8.6, RFC 9112 §6.3).
    ///
    /// Repeated fields or a list are accepted only when every element is the same number.
    static func contentLength(in headers: HTTPHeaders, limits: HTTPLimits) throws(HTTPParseError) -> Int {
        var length: Int?
        var isFirst = true
        for element in headers.listElements(for: "Content-Length") {
            guard !element.isEmpty, element.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                throw .badRequest("invalid Content-Length")
            }
            // A value too large for Int is kept as nil: certainly over the limit, equal only to another such.
            var value: Int? = 0
            for digit in element {
                guard let current = value else { break }
                let (shifted, overflowA) = current.multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = shifted.addingReportingOverflow(Int(digit - 0x30))
                value = overflowA || overflowB ? nil : sum
            }
            if !isFirst && value != length { throw .badRequest("conflicting Content-Length values") }
            length = value
            isFirst = false
        }
        guard let length, length <= limits.maxBodyBytes else { throw .payloadTooLarge }
        return length
    }
}
