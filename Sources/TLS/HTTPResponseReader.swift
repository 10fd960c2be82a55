/// A complete HTTP/1.1 response as ``HTTPSClient`` returns it.
public struct HTTPSResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields in arrival order, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body, transfer coding undone.
    public var body: [UInt8]

    /// The values of every field named `name` (case-insensitively), joined with `, ` (RFC 9110 §5.3); `nil` if none.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        let values = headers.filter { $0.name.lowercased() == wanted }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

/// Reads one HTTP/1.1 response (RFC 9112) from decrypted bytes as they arrive, within size limits.
///
/// Bodies framed by `Transfer-Encoding: chunked`, by `Content-Length`, or by the end of the connection are
/// accepted. Informational (1xx) heads are skipped. Anything malformed, and any head or body over its limit, is an
/// error at once, so a hostile server cannot make the reader buffer more than the limits.
struct HTTPResponseReader {
    /// Why a response was refused.
    enum Failure: Error, Equatable {
        /// The head is not HTTP/1.x, or a field, chunk size or length is malformed.
        case malformed(String)
        /// The head is longer than ``maxHeadBytes``.
        case headTooLarge(limit: Int)
        /// The body is longer than the reader's limit.
        case bodyTooLarge(limit: Int)
        /// The connection ended before the response did.
        case truncated
    }

    /// Longest head accepted (status line and fields).
    static let maxHeadBytes = 64 * 1024

    /// Largest body accepted.
    let maxBodyBytes: Int

    private enum Framing {
        case length(Int)
        case chunked
        case untilClose
    }

    private enum State {
        /// Reading the head.
        case head
        /// Reading a body of known remaining length, or until the connection closes.
        case body(Framing)
        /// Chunked: reading a chunk-size line.
        case chunkSize
        /// Chunked: `remaining` data bytes of the current chunk.
        case chunkData(remaining: Int)
        /// Chunked: the CRLF after a chunk's data.
        case chunkEnd
        /// Chunked: trailer fields, up to the empty line.
        case trailer
        /// The response is complete.
        case done
    }

    private var state = State.head
    private var pending: [UInt8] = []
    private var status = 0
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    /// Whether the response is complete.
    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// The response, once complete.
    var response: HTTPSResponse? {
        isComplete ? HTTPSResponse(status: status, headers: headers, body: body) : nil
    }

    /// Consumes `bytes`; bytes after the end of the response are ignored (the connection is closed anyway).
    mutating func feed(_ bytes: [UInt8]) throws(Failure) {
        pending += bytes
        var progressed = true
        while progressed, !isComplete {
            progressed = try step()
        }
    }

    /// The connection ended: a body framed by the close is complete, anything else is truncated.
    mutating func finish() throws(Failure) {
        switch state {
        case .done: return
        case .body(.untilClose): state = .done
        default: throw .truncated
        }
    }

    /// Advances by one piece; returns whether it consumed anything.
    private mutating func step() throws(Failure) -> Bool {
        switch state {
        case .head:
            guard let end = Self.find([13, 10, 13, 10], in: pending) else {
                if pending.count > Self.maxHeadBytes { throw .headTooLarge(limit: Self.maxHeadBytes) }
                return false
            }
            guard end <= Self.maxHeadBytes else { throw .headTooLarge(limit: Self.maxHeadBytes) }
            let head = Array(pending[..<end])
            pending.removeFirst(end + 4)
            try readHead(head)
            return true
        case .body(.length(let remaining)):
            guard !pending.isEmpty else { return false }
            let take = min(remaining, pending.count)
            try append(pending[..<take])
            pending.removeFirst(take)
            state = remaining == take ? .done : .body(.length(remaining - take))
            return true
        case .body(.untilClose):
            guard !pending.isEmpty else { return false }
            try append(pending[...])
            pending.removeAll()
            return true
        case .body(.chunked), .chunkSize:
            guard let end = Self.find([13, 10], in: pending) else {
                if pending.count > 1024 { throw .malformed("a chunk-size line is longer than 1024 bytes") }
                return false
            }
            let line = String(decoding: pending[..<end], as: UTF8.self)
            pending.removeFirst(end + 2)
            let sizeText = line.prefix { $0 != ";" }.trimmingCharacters(in: " \t")
            guard !sizeText.isEmpty, sizeText.count <= 8, let size = Int(sizeText, radix: 16), size >= 0 else {
                throw .malformed("bad chunk size")
            }
            state = size == 0 ? .trailer : .chunkData(remaining: size)
            return true
        case .chunkData(let remaining):
            guard !pending.isEmpty else { return false }
            let take = min(remaining, pending.count)
            try append(pending[..<take])
            pending.removeFirst(take)
            state = remaining == take ? .chunkEnd : .chunkData(remaining: remaining - take)
            return true
        case .chunkEnd:
            guard pending.count >= 2 else { return false }
            guard pending[0] == 13, pending[1] == 10 else { throw .malformed("a chunk does not end with CRLF") }
            pending.removeFirst(2)
            state = .chunkSize
            return true
        case .trailer:
            guard let end = Self.find([13, 10], in: pending) else {
                if pending.count > Self.maxHeadBytes { throw .headTooLarge(limit: Self.maxHeadBytes) }
                return false
            }
            pending.removeFirst(end + 2)
            if end == 0 { state = .done }
            return true
        case .done:
            return false
        }
    }

    /// Parses the status line and fields and decides how the body is framed.
    private mutating func readHead(_ head: [UInt8]) throws(Failure) {
        let lines = head.split(separator: 10, omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
        }
        guard let statusLine = lines.first else { throw .malformed("empty head") }
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].count == 3,
              let code = Int(parts[1]), (100...599).contains(code)
        else { throw .malformed("not an HTTP/1.x status line") }
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed("a header line has no colon") }
            let name = String(line[..<colon])
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else {
                throw .malformed("a header name is empty or has spaces")
            }
            fields.append((name, line[line.index(after: colon)...].trimmingCharacters(in: " \t")))
        }
        if (100...199).contains(code) {
            return  // interim response: the final one follows
        }
        status = code
        headers = fields
        let response = HTTPSResponse(status: code, headers: fields, body: [])
        if code == 204 || code == 304 {
            state = .done
        } else if let coding = response.header("Transfer-Encoding") {
            guard coding.lowercased().split(separator: ",").last?.trimmingCharacters(in: " \t") == "chunked" else {
                throw .malformed("unsupported transfer coding \(coding.prefix(40))")
            }
            state = .body(.chunked)
        } else if let lengthText = response.header("Content-Length") {
            let values = Set(lengthText.split(separator: ",").map { $0.trimmingCharacters(in: " \t") })
            guard values.count == 1, let only = values.first, only.count <= 18, only.allSatisfy(\.isNumber),
                  let length = Int(only)
            else { throw .malformed("bad Content-Length") }
            guard length <= maxBodyBytes else { throw .bodyTooLarge(limit: maxBodyBytes) }
            state = length == 0 ? .done : .body(.length(length))
        } else {
            state = .body(.untilClose)
        }
    }

    private mutating func append(_ bytes: ArraySlice<UInt8>) throws(Failure) {
        guard body.count + bytes.count <= maxBodyBytes else { throw .bodyTooLarge(limit: maxBodyBytes) }
        body += bytes
    }

    /// The index where `pattern` first occurs in `bytes`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        for index in 0...(bytes.count - pattern.count) where bytes[index] == pattern[0] {
            if bytes[index..<(index + pattern.count)].elementsEqual(pattern) { return index }
        }
        return nil
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters of `set`.
    fileprivate func trimmingCharacters(in set: String) -> String {
        let scalars = Set(set)
        return String(drop { scalars.contains($0) }.reversed().drop { scalars.contains($0) }.reversed())
    }
}
