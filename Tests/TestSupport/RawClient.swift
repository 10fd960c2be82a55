#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client for tests: sends raw bytes and reads with a timeout, so tests speak
/// exactly the bytes they mean (the redis "deferring client" idea).
public final class RawClient {
    /// The socket descriptor.
    public let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects to 127.0.0.1:`port` (or `host`), with `timeoutSeconds` on every read.
    public init(host: String = "127.0.0.1", port: UInt16, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawClientError.system("socket", errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw RawClientError.system("connect", error)
        }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends every byte.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw RawClientError.system("send", errno) }
            offset += sent
        }
    }

    /// Sends a string's UTF-8 bytes.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads whatever arrives next (at least one byte); empty at end of stream.
    public func readSome() throws -> [UInt8] {
        if !buffered.isEmpty {
            defer { buffered.removeAll() }
            return buffered
        }
        return try readRaw()
    }

    /// Reads exactly `count` bytes.
    public func read(count: Int) throws -> [UInt8] {
        while buffered.count < count {
            let more = try readRaw()
            if more.isEmpty { throw RawClientError.closed }
            buffered += more
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[0..<count])
    }

    /// Reads one HTTP/1.1 response (head and Content-Length or chunked body) and returns it.
    public func readResponse() throws -> RawResponse {
        while true {
            if let response = RawResponse.parse(&buffered) { return response }
            let more = try readRaw()
            if more.isEmpty { throw RawClientError.closed }
            buffered += more
        }
    }

    /// Whether the server closed the connection (reads until end of stream or timeout).
    public func waitForClose() -> Bool {
        while true {
            guard let more = try? readRaw() else { return false }
            if more.isEmpty { return true }
        }
    }

    private func readRaw() throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == ECONNRESET { return [] }
            throw RawClientError.system("recv", errno)
        }
        return Array(chunk[0..<count])
    }
}

/// Errors of ``RawClient``.
public enum RawClientError: Error {
    /// A system call failed (or a read timed out: EAGAIN).
    case system(String, Int32)
    /// The peer closed before the expected bytes arrived.
    case closed
}

/// A parsed HTTP response as seen by a test.
public struct RawResponse {
    /// Status code.
    public var status: Int
    /// Header lines, names lowercased.
    public var headers: [String: String]
    /// Body bytes.
    public var body: [UInt8]
    /// Body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// Parses one response from the front of `buffer`, removing its bytes; `nil` if incomplete.
    public static func parse(_ buffer: inout [UInt8]) -> RawResponse? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headEnd = buffer.firstRange(of: separator) else { return nil }
        let head = String(decoding: buffer[..<headEnd.lowerBound], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        let status = statusLine.count > 1 ? Int(statusLine[1]) ?? 0 : 0
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(in: " ")
        }
        var offset = headEnd.upperBound
        var body: [UInt8] = []
        if headers["transfer-encoding"] == "chunked" {
            while true {
                guard let lineEnd = buffer[offset...].firstRange(of: [13, 10]) else { return nil }
                let sizeText = String(decoding: buffer[offset..<lineEnd.lowerBound], as: UTF8.self)
                guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else { return nil }
                let start = lineEnd.upperBound
                guard buffer.count >= start + size + 2 else { return nil }
                body += buffer[start..<(start + size)]
                offset = start + size + 2
                if size == 0 { break }
            }
        } else if status == 101 || status == 100 || status == 204 {
            // no body
        } else {
            let length = Int(headers["content-length"] ?? "0") ?? 0
            guard buffer.count >= offset + length else { return nil }
            body = Array(buffer[offset..<(offset + length)])
            offset += length
        }
        buffer.removeFirst(offset)
        return RawResponse(status: status, headers: headers, body: body)
    }
}

extension String {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(drop(while: { $0 == character }).reversed().drop(while: { $0 == character }).reversed())
    }
}
