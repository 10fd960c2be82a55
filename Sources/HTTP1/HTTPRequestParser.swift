import Primitives

/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in through ``feed(_:)-(UnsafeRawBufferPointer)``,
/// one event at a time out through ``next()``. It does no I/O, so it works on any split of the byte stream.
///
/// ```swift
/// parser.feed(bytesJustRead)
/// while let event = parser.next() {
///     switch event {
///     case .expectContinue: send(HTTPResponseHead(status: .continue).encoded())
///     case .request(let request): handle(request)
///     case .failure(let error): send(HTTPResponse.error(error.status, message: error.message).encoded()); close()
///     }
/// }
/// ```
///
/// ``next()`` never consumes bytes past the end of the request it returns, so pipelined requests come out
/// one by one, and after an `Upgrade` request the bytes that followed it (the first WebSocket frames) are
/// still available from ``takeUnparsedBytes()``.
///
/// Leniency, chosen with request smuggling in mind (RFC 9112 §11.2): lines must end in CRLF (a bare LF or
/// bare CR is a 400, although §2.2 would allow accepting a bare LF); empty lines before a request line are
/// skipped as §2.2 recommends; obs-fold and whitespace before a field's colon are rejected (§5.1, §5.2);
/// a request with both `Content-Length` and `Transfer-Encoding`, or with `Transfer-Encoding` in HTTP/1.0,
/// is rejected rather than decoded (§6.1, §6.3); HTTP/1.1 requests need exactly one `Host` (§3.2).
/// After a failure the parser is finished: ``next()`` returns nil and ``feed(_:)-(UnsafeRawBufferPointer)``
/// drops its input.
public struct HTTPRequestParser: Sendable {
    /// The longest chunk-size line accepted, extensions included; chunk extensions are ignored, so there
    /// is no reason to buffer more.
    static let maxChunkSizeLineBytes = 4096
    /// The most body capacity reserved up front from a declared `Content-Length`, so a peer that announces a
    /// large body and sends nothing cannot make the server allocate the full limit.
    static let maxReservedBodyBytes = 64 * 1024

    /// Where in the message the parser is. The request under construction travels in the payloads; the
    /// body lives in ``body`` so it is appended to in place.
    enum State: Sendable {
        /// Waiting for a request line; counts the empty-line bytes skipped before it.
        case requestLine(skippedEmptyLineBytes: Int)
        /// Reading header fields into ``fields``; counts the field-section bytes so far.
        case fieldLines(RequestLine, fieldSectionBytes: Int)
        /// Reading a body framed by `Content-Length`.
        case fixedLengthBody(HTTPRequestHead, remaining: Int)
        /// Expecting a chunk-size line (RFC 9112 §7.1).
        case chunkSizeLine(HTTPRequestHead)
        /// Reading the data of a chunk.
        case chunkData(HTTPRequestHead, remaining: Int)
        /// Expecting the CRLF after a chunk's data.
        case chunkDataEnd(HTTPRequestHead)
        /// Reading (and discarding) the trailer section after the last chunk; counts its bytes.
        case trailerLines(HTTPRequestHead, trailerSectionBytes: Int)
        /// A failure was returned; nothing more is parsed.
        case failed
    }

    /// The method, target and version of the request line being parsed.
    struct RequestLine: Sendable {
        var method: String
        var target: String
        var version: HTTPVersion
    }

    /// The limits this parser enforces.
    public let limits: HTTPLimits

    /// Bytes fed but not yet consumed; the front is the next unparsed byte.
    var buffer = ByteBuffer()
    var state = State.requestLine(skippedEmptyLineBytes: 0)
    /// How far into the current (incomplete) line the CRLF search has already looked, so drip-fed lines are
    /// scanned once in total rather than once per feed.
    var lineScanOffset = 0
    /// Whether the request-line scan has passed the space that ends the method.
    var methodEnded = false
    /// Header fields of the request being parsed.
    var fields = HTTPHeaders()
    /// Body of the request being parsed.
    var body: [UInt8] = []

    /// Creates a parser that enforces `limits`.
    public init(limits: HTTPLimits = .init()) {
        self.limits = limits
    }

    /// Appends bytes received from the peer; call ``next()`` afterwards until it returns nil.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        if case .failed = state { return }
        buffer.append(bytes)
    }

    /// Appends bytes received from the peer; call ``next()`` afterwards until it returns nil.
    public mutating func feed(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { feed($0) }
    }

    /// The next event, or nil when more bytes are needed (or the parser has failed before).
    ///
    /// Returns one request at a time and never consumes bytes past its end.
    public mutating func next() -> HTTPParserEvent? {
        do {
            return try parse()
        } catch {
            state = .failed
            buffer = ByteBuffer()
            fields = HTTPHeaders()
            body = []
            return .failure(error)
        }
    }

    /// Removes and returns the bytes after the last returned request, for a protocol that takes over the
    /// connection (WebSocket after `Upgrade`). Call it right after a ``HTTPParserEvent/request(_:)``.
    public mutating func takeUnparsedBytes() -> [UInt8] {
        lineScanOffset = 0
        methodEnded = false
        return buffer.readAll()
    }

    /// Whether part of a request has arrived but not all of it: bytes are buffered, or a request is under way.
    ///
    /// A server uses it to tell an idle keep-alive connection from a slow request (slowloris).
    public var hasPartialRequest: Bool {
        switch state {
        case .requestLine(let skipped): skipped > 0 || !buffer.isEmpty
        case .failed: false
        default: true
        }
    }

    // MARK: - State machine

    /// Advances through the buffered bytes until an event is ready or more bytes are needed.
    mutating func parse() throws(HTTPParseError) -> HTTPParserEvent? {
        while true {
            switch state {
            case .failed:
                return nil

            case .requestLine(let skipped):
                guard let length = try scanLine(maxLength: limits.maxRequestLineBytes, tooLong: .uriTooLong,
                                                checkingMethod: true) else { return nil }
                if length == 0 {
                    // RFC 9112 §2.2: ignore empty lines before a request line, within the same budget.
                    guard skipped + 2 <= limits.maxRequestLineBytes else {
                        throw .badRequest("too many empty lines before the request line")
                    }
                    consumeLine(length: 0)
                    state = .requestLine(skippedEmptyLineBytes: skipped + 2)
                    continue
                }
                let requestLine = try withLine(length: length, Self.parseRequestLine)
                consumeLine(length: length)
                state = .fieldLines(requestLine, fieldSectionBytes: 0)

            case .fieldLines(let requestLine, let sectionBytes):
                guard let length = try scanLine(maxLength: limits.maxHeaderBytes - sectionBytes - 2,
                                                tooLong: .headersTooLarge) else { return nil }
                if length == 0 {
                    consumeLine(length: 0)
                    if let event = try finishHead(requestLine) { return event }
                    continue
                }
                guard fields.count < limits.maxHeaderCount else { throw .headersTooLarge }
                let field = try withLine(length: length, Self.parseFieldLine)
                fields.add(name: field.name, value: field.value)
                consumeLine(length: length)
                state = .fieldLines(requestLine, fieldSectionBytes: sectionBytes + length + 2)

            case .fixedLengthBody(let head, let remaining):
                let left = moveToBody(upTo: remaining)
                guard left == 0 else {
                    state = .fixedLengthBody(head, remaining: left)
                    return nil
                }
                return complete(head)

            case .chunkSizeLine(let head):
                guard let length = try scanLine(maxLength: Self.maxChunkSizeLineBytes,
                                                tooLong: .badRequest("chunk size line too long")) else { return nil }
                let maxSize = limits.maxBodyBytes - body.count
                let size = try withLine(length: length) { line throws(HTTPParseError) in
                    try Self.parseChunkSize(line, maxSize: maxSize)
                }
                consumeLine(length: length)
                state = size == 0 ? .trailerLines(head, trailerSectionBytes: 0) : .chunkData(head, remaining: size)

            case .chunkData(let head, let remaining):
                let left = moveToBody(upTo: remaining)
                state = left == 0 ? .chunkDataEnd(head) : .chunkData(head, remaining: left)
                if left > 0 { return nil }

            case .chunkDataEnd(let head):
                guard try consumeChunkDataEnd() else { return nil }
                state = .chunkSizeLine(head)

            case .trailerLines(let head, let sectionBytes):
                guard let length = try scanLine(maxLength: limits.maxHeaderBytes - sectionBytes - 2,
                                                tooLong: .headersTooLarge) else { return nil }
                if length == 0 {
                    consumeLine(length: 0)
                    return complete(head)
                }
                // RFC 9112 §7.1.2: trailers may be discarded; they are still checked for valid syntax.
                _ = try withLine(length: length, Self.parseFieldLine)
                consumeLine(length: length)
                state = .trailerLines(head, trailerSectionBytes: sectionBytes + length + 2)
            }
        }
    }

    /// Ends the current request: hands out its body and resets for the next one.
    mutating func complete(_ head: HTTPRequestHead) -> HTTPParserEvent {
        let request = HTTPRequest(head: head, body: body)
        body = []
        state = .requestLine(skippedEmptyLineBytes: 0)
        return .request(request)
    }

    /// Moves up to `count` buffered bytes into ``body`` and returns how many of `count` are still missing.
    mutating func moveToBody(upTo count: Int) -> Int {
        let available = min(count, buffer.readableCount)
        guard available > 0 else { return count }
        var body = self.body
        self.body = []
        buffer.withUnsafeReadableBytes { bytes in
            body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(available)))
        }
        self.body = body
        buffer.consume(available)
        return count - available
    }

    /// Consumes the CRLF that must follow a chunk's data; false when it has not fully arrived yet.
    mutating func consumeChunkDataEnd() throws(HTTPParseError) -> Bool {
        let error = HTTPParseError.badRequest("chunk data not followed by CRLF")
        guard buffer.readableCount > 0 else { return false }
        guard buffer[0] == ASCII.cr else { throw error }
        guard buffer.readableCount > 1 else { return false }
        guard buffer[1] == ASCII.lf else { throw error }
        buffer.consume(2)
        return true
    }
}
