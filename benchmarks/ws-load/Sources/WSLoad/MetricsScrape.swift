import Glibc

/// Reads a Prometheus text endpoint (`/.metrics`) with one blocking HTTP/1.1 GET, at the edges of a run only.
struct MetricsScrape {
    /// A URL, connection or response error.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Seconds the whole request may take.
    static let timeoutSeconds = 5.0
    /// Largest response accepted.
    static let maximumBytes = 16 << 20

    let host: String
    let port: Int
    let path: String

    /// Parses `http://HOST:PORT/PATH` (no TLS, no user info).
    init(url: String) throws {
        guard url.hasPrefix("http://") else { throw Failure(description: "--metrics-url must start with http://") }
        let rest = url.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" }
        path = rest.count > authority.count ? String(rest[authority.endIndex...]) : "/"
        if let colon = authority.lastIndex(of: ":") {
            guard let port = Int(authority[authority.index(after: colon)...]), (1...65535).contains(port) else {
                throw Failure(description: "bad port in \(url)")
            }
            host = String(authority[..<colon])
            self.port = port
        } else {
            host = String(authority)
            port = 80
        }
        guard !host.isEmpty else { throw Failure(description: "no host in \(url)") }
    }

    /// Every sample's value summed per metric name (labels dropped), e.g. `["canopy_push_frames_encoded_total": 12]`.
    func fetch() throws -> [String: Double] {
        let body = try get()
        return Self.parse(String(decoding: body, as: UTF8.self))
    }

    /// Sums the samples of Prometheus text exposition format per metric name; comments and bad lines are skipped.
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

    /// The response body of `GET path` (chunked transfer coding undone); throws unless the status is 200.
    private func get() throws -> [UInt8] {
        let fd = try ServerAddress(host: host, port: port).startConnect()
        defer { close(fd) }
        let deadline = monotonicNanoseconds() + UInt64(Self.timeoutSeconds * 1e9)
        try wait(fd, for: Int16(POLLOUT), until: deadline)
        var request = Array("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        while !request.isEmpty {
            let written = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written > 0 {
                request.removeFirst(written)
            } else if written < 0, errno == EAGAIN || errno == EINTR {
                try wait(fd, for: Int16(POLLOUT), until: deadline)
            } else {
                throw Failure(description: "metrics request: \(errnoText())")
            }
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                response.append(contentsOf: chunk[..<count])
                guard response.count <= Self.maximumBytes else { throw Failure(description: "metrics too large") }
            } else if count == 0 {
                break
            } else if errno == EAGAIN || errno == EINTR {
                try wait(fd, for: Int16(POLLIN), until: deadline)
            } else {
                throw Failure(description: "metrics response: \(errnoText())")
            }
        }
        return try Self.body(of: response)
    }

    private func wait(_ fd: Int32, for events: Int16, until deadline: UInt64) throws {
        let now = monotonicNanoseconds()
        guard now < deadline else { throw Failure(description: "metrics request timed out") }
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        _ = poll(&descriptor, 1, Int32((deadline - now) / 1_000_000 + 1))
    }

    /// The body of a complete `Connection: close` response.
    static func body(of response: [UInt8]) throws -> [UInt8] {
        let separator = Array("\r\n\r\n".utf8)
        guard let headerEnd = response.indices.first(where: { response[$0...].starts(with: separator) }) else {
            throw Failure(description: "metrics response without headers")
        }
        let head = String(decoding: response[..<headerEnd], as: UTF8.self).lowercased()
        guard head.hasPrefix("http/1.1 200") || head.hasPrefix("http/1.0 200") else {
            throw Failure(description: "metrics: \(String(decoding: response.prefix { $0 != 13 }, as: UTF8.self))")
        }
        let body = Array(response[(headerEnd + 4)...])
        guard head.contains("transfer-encoding: chunked") else { return body }
        var decoded: [UInt8] = []
        var position = 0
        while position < body.count {
            guard let lineEnd = body[position...].firstIndex(of: UInt8(ascii: "\r")) else { break }
            let sizeText = String(decoding: body[position..<lineEnd], as: UTF8.self).prefix { $0 != ";" }
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw Failure(description: "metrics: bad chunk size")
            }
            if size == 0 { break }
            let start = lineEnd + 2
            guard start + size <= body.count else { throw Failure(description: "metrics: truncated chunk") }
            decoded.append(contentsOf: body[start..<(start + size)])
            position = start + size + 2
        }
        return decoded
    }
}
