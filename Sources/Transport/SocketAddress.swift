#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 socket address parsed from a numeric host, or resolved from a name.
public struct SocketAddress: Sendable, CustomStringConvertible {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    private let storage: sockaddr_storage

    /// Resolves `host` (numeric IPv4/IPv6 or a name such as `localhost`) with `port`.
    public init(host: String, port: UInt16) throws(SystemCallError) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            self.init(copying: &v4, family: AF_INET)
            return
        }
        var v6 = sockaddr_in6()
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            self.init(copying: &v6, family: AF_INET6)
            return
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else {
            throw SystemCallError(call: "getaddrinfo(\(host))", errno: EINVAL)
        }
        defer { freeaddrinfo(result) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: first.pointee.ai_addr, count: Int(first.pointee.ai_addrlen)))
        }
        self.init(storage: storage, family: first.pointee.ai_family)
    }

    private init(storage: sockaddr_storage, family: Int32) {
        self.storage = storage
        self.family = family
    }

    private init<T>(copying address: inout T, family: Int32) {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: &address) { target.copyMemory(from: $0) }
        }
        self.family = family
        self.storage = storage
    }

    /// Reads the address of a socket (`getsockname`) or its peer (`getpeername`).
    init?(fd: Int32, peer: Bool) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)
            }
        }
        guard result == 0 else { return nil }
        self.family = Int32(storage.ss_family)
        self.storage = storage
    }

    /// Length of the concrete `sockaddr`.
    var length: socklen_t {
        socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    /// The port in host byte order.
    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            family == AF_INET6
                ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
        }
    }

    /// The numeric host (`127.0.0.1`, `::1`).
    public var host: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                var address = raw.load(as: sockaddr_in6.self).sin6_addr
                _ = inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count))
            } else {
                var address = raw.load(as: sockaddr_in.self).sin_addr
                _ = inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count))
            }
        }
        let end = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the address is on the loopback interface (127.0.0.0/8 or ::1).
    public var isLoopback: Bool {
        withUnsafeBytes(of: storage) { raw in
            if family == AF_INET6 {
                let bytes = withUnsafeBytes(of: raw.load(as: sockaddr_in6.self).sin6_addr) { Array($0) }
                return bytes == [UInt8](repeating: 0, count: 15) + [1]
            }
            return UInt32(bigEndian: raw.load(as: sockaddr_in.self).sin_addr.s_addr) >> 24 == 127
        }
    }

    public var description: String { family == AF_INET6 ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
