import HTTP1
import Primitives
import WebSocket
import WebSocketDeflate

#if canImport(Glibc)
import Glibc
#endif

/// Files served as they are (a web console's HTML, CSS and JavaScript), read once when loaded: each with its
/// content type, a strong `ETag`, and a gzip copy when that is smaller.
///
/// Requests are answered from memory by exact relative path, so no request reaches the file system and no path
/// can climb out of the directory.
public struct StaticAssets: Sendable {
    struct Asset: Sendable {
        let contentType: String
        let etag: String
        let body: [UInt8]
        let gzipped: [UInt8]?
    }

    /// Most bytes one file, and all of them, may have.
    static let maxFileBytes = 4 << 20
    static let maxTotalBytes = 32 << 20

    private let assets: [String: Asset]

    /// The relative paths served.
    public var paths: [String] { assets.keys.sorted() }

    /// Reads every regular file under `directory` (recursively; hidden files skipped).
    ///
    /// - Throws: ``StaticAssetsError`` when the directory cannot be read or holds too much.
    public init(directory: String) throws(StaticAssetsError) {
        var files: [(path: String, bytes: [UInt8])] = []
        var total = 0
        for relative in try Self.files(under: directory, relative: "") {
            let bytes = try Self.read(directory + "/" + relative)
            total += bytes.count
            guard total <= Self.maxTotalBytes else { throw .tooLarge(directory) }
            files.append((relative, bytes))
        }
        self.init(files: files)
    }

    /// Serves the given files (a console built into the binary), each under its relative path, with the same
    /// headers as files read from a directory.
    public init(files: [(path: String, bytes: [UInt8])]) {
        var assets: [String: Asset] = [:]
        for (path, bytes) in files {
            let compressed = GzipEncoding.compress(bytes).flatMap { $0.count < bytes.count ? $0 : nil }
            let checksum = String(CRC32C.checksum(bytes), radix: 16)
            assets[path] = Asset(contentType: Self.contentType(of: path),
                                 etag: "\"\(checksum)-\(String(bytes.count, radix: 16))\"",
                                 body: bytes, gzipped: compressed)
        }
        self.assets = assets
    }

    /// The answer to a `GET` of `path` (relative to the directory): `200` with the file (gzipped when the client
    /// accepts it), `304` when the client's copy is current, `404` when there is no such file.
    public func response(for path: String, request head: HTTPRequestHead) -> HTTPResponse {
        guard let asset = assets[path] else { return .error(.notFound, message: "Not found") }
        var headers: HTTPHeaders = [
            "Content-Type": asset.contentType, "ETag": asset.etag, "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff", "Vary": "Accept-Encoding",
        ]
        if let tags = head.headers["If-None-Match"],
            HTTPFieldList.elements(of: [tags]).contains(where: { $0 == asset.etag || $0 == "*" })
        {
            return HTTPResponse(status: .notModified, headers: headers)
        }
        if let gzipped = asset.gzipped, Self.acceptsGzip(head.headers["Accept-Encoding"]) {
            headers.add(name: "Content-Encoding", value: "gzip")
            return HTTPResponse(status: .ok, headers: headers, body: gzipped)
        }
        return HTTPResponse(status: .ok, headers: headers, body: asset.body)
    }

    private static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        return HTTPFieldList.elements(of: [header]).contains { coding in
            let parts = coding.split(separator: ";").map { HTTPFieldList.trimmingWhitespace($0).lowercased() }
            return parts.first == "gzip" && !parts.dropFirst().contains { $0 == "q=0" || $0 == "q=0.0" }
        }
    }

    static func contentType(of path: String) -> String {
        let suffix = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch suffix {
        case "html": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json": return "application/json; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "ico": return "image/x-icon"
        case "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }

    private static func files(under root: String, relative: String) throws(StaticAssetsError) -> [String] {
        let path = relative.isEmpty ? root : root + "/" + relative
        guard let directory = opendir(path) else { throw .unreadable(path) }
        defer { closedir(directory) }
        var found: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard !name.hasPrefix(".") else { continue }
            let child = relative.isEmpty ? name : relative + "/" + name
            var status = stat()
            guard stat(root + "/" + child, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFDIR {
                found += try files(under: root, relative: child)
            } else if status.st_mode & S_IFMT == S_IFREG {
                found.append(child)
            }
        }
        return found
    }

    private static func read(_ path: String) throws(StaticAssetsError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw .unreadable(path) }
            guard count > 0 else { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= maxFileBytes else { throw .tooLarge(path) }
        }
    }
}

/// Why static assets could not be loaded.
public enum StaticAssetsError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(String)
    case tooLarge(String)

    public var description: String {
        switch self {
        case .unreadable(let path): return "cannot read \(path)"
        case .tooLarge(let path): return "\(path) is too large to serve from memory"
        }
    }
}
