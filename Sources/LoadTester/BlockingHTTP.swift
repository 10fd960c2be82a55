import Glibc
import TLS

/// One blocking HTTP/1.1 request with `Connection: close`, over TCP or TLS: the metrics scrape and the query
/// scenario's prefill, at the edges of a run only.
struct BlockingHTTP {
    /// A URL, connection or response error.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Seconds a whole request may take.
    static let timeoutSeconds = 10.0
    /// Largest response accepted.
    static let maximumBytes = 64 << 20

    let host: String
    let port: Int
    /// The path and query of the URL.
    let target: String
    let tlsContext: TLSContext?

    /// Parses `http[s]://HOST[:PORT][/PATH]`; `https` uses `tlsContext` (which the caller makes from the run's CA
    /// settings).
    init(url: String, tlsContext: TLSContext?) throws {
        let secure: Bool
        let rest: Substring
        if url.hasPrefix("http://") {
            secure = false
            rest = url.dropFirst(7)
        } else if url.hasPrefix("https://") {
            secure = true
            rest = url.dropFirst(8)
        } else {
            throw Failure(description: "not an http:// or https:// URL: \(url)")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        target = path.isEmpty ? "/" : (path.hasPrefix("/") ? String(path) : "/" + path)
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
                throw Failure(description: "bad port in \(url)")
            }
            host = String(authority[..<colon]).trimmingBrackets
            self.port = port
        } else {
            host = String(authority).trimmingBrackets
            port = secure ? 443 : 80
        }
        guard !host.isEmpty else { throw Failure(description: "no host in \(url)") }
        if secure {
            guard let tlsContext else { throw Failure(description: "no TLS settings for \(url)") }
            self.tlsContext = tlsContext
        } else {
            self.tlsContext = nil
        }
    }

    /// Sends the request and returns the status and body (chunked transfer coding undone).
    func request(method: String, body: [UInt8] = [], headers: [(String, String)] = []) throws -> (
        status: Int, body: [UInt8]
    ) {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if method != "GET" { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        let fd = try ServerAddress(host: host, port: port).startConnect()
        defer { close(fd) }
        let deadline = monotonicNanoseconds() + UInt64(Self.timeoutSeconds * 1e9)
        try wait(fd, for: Int16(POLLOUT), until: deadline)
        var socketError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length) == 0, socketError != 0 {
            throw Failure(description: "cannot connect to \(host):\(port): \(String(cString: strerror(socketError)))")
        }
        let session = try tlsContext.map { try TLSSession(context: $0, serverName: host) }
        if let session {
            try session.startHandshake()
            try request.withUnsafeBytes { try session.writePlaintext($0) }
            try sendAll(fd, session.takeCiphertext() ?? [], until: deadline)
        } else {
            try sendAll(fd, request, until: deadline)
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !(session?.peerClosed ?? false) {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                if let session {
                    response += try chunk.withUnsafeBytes {
                        try session.receivedCiphertext(UnsafeRawBufferPointer(rebasing: $0[..<count]))
                    }
                    try sendAll(fd, session.takeCiphertext() ?? [], until: deadline)
                } else {
                    response.append(contentsOf: chunk[..<count])
                }
                guard response.count <= Self.maximumBytes else { throw Failure(description: "response too large") }
            } else if count == 0 {
                break
            } else if errno == EAGAIN || errno == EINTR {
                try wait(fd, for: Int16(POLLIN), until: deadline)
            } else {
                throw Failure(description: "reading the response from \(host):\(port): \(errnoText())")
            }
        }
        return try Self.parse(response)
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8], until deadline: UInt64) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EAGAIN || errno == EINTR {
                try wait(fd, for: Int16(POLLOUT), until: deadline)
            } else {
                throw Failure(description: "sending to \(host):\(port): \(errnoText())")
            }
        }
    }

    private func wait(_ fd: Int32, for events: Int16, until deadline: UInt64) throws {
        let now = monotonicNanoseconds()
        guard now < deadline else { throw Failure(description: "request to \(host):\(port) timed out") }
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        _ = poll(&descriptor, 1, Int32((deadline - now) / 1_000_000 + 1))
    }

    /// The status and body of a complete `Connection: close` response.
    static func parse(_ response: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        guard let headEnd = UpgradeRequest.headEnd(in: response, searchingFrom: 0) else {
            throw Failure(description: "response without a complete head")
        }
        let head = String(decoding: response[..<(headEnd - 4)], as: UTF8.self).lowercased()
        let statusFields = head.prefix { $0 != "\r" }.split(separator: " ")
        guard statusFields.count >= 2, statusFields[0].hasPrefix("http/1."), let status = Int(statusFields[1]) else {
            throw Failure(description: "not an HTTP response")
        }
        let body = Array(response[headEnd...])
        guard head.contains("transfer-encoding: chunked") else { return (status, body) }
        var decoded: [UInt8] = []
        var position = 0
        while position < body.count {
            guard let lineEnd = body[position...].firstIndex(of: UInt8(ascii: "\r")) else { break }
            let sizeText = String(decoding: body[position..<lineEnd], as: UTF8.self).prefix { $0 != ";" }
            guard let size = Int(sizeText, radix: 16), size >= 0 else { throw Failure(description: "bad chunk size") }
            if size == 0 { break }
            let start = lineEnd + 2
            guard start + size <= body.count else { throw Failure(description: "truncated chunk") }
            decoded.append(contentsOf: body[start..<(start + size)])
            position = start + size + 2
        }
        return (status, decoded)
    }
}

/// The Prometheus text exposition format, read as totals per metric name.
enum PrometheusText {
    /// Every sample's value summed per metric name (labels dropped), e.g.
    /// `["canopy_push_frames_encoded_total": 12]`; comments and bad lines are skipped.
    static func parse(_ text: String) -> [String: Double] {
        var totals: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            guard let first = line.first, first != "#" else { continue }
            let name: Substring
            let rest: Substring
            if let brace = line.firstIndex(of: "{") {
                guard let close = line[brace...].lastIndex(of: "}") else { continue }
                name = line[..<brace]
                rest = line[line.index(after: close)...]
            } else {
                guard let space = line.firstIndex(of: " ") else { continue }
                name = line[..<space]
                rest = line[space...]
            }
            guard let valueText = rest.split(separator: " ").first, let value = Double(valueText) else { continue }
            totals[String(name), default: 0] += value
        }
        return totals
    }
}

extension String {
    /// The text without the brackets around an IPv6 literal.
    fileprivate var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
