import NIOCore

/// How a broadcast message is turned into bytes for its recipients.
enum BroadcastEncoding: CustomStringConvertible {
    /// The whole frame (header and payload) is encoded once into one `ByteBuffer` that every recipient writes.
    case shared
    /// Every recipient writes a `WebSocketFrame` through NIO's `WebSocketFrameEncoder` (shared payload, own header).
    case perConnection

    var description: String {
        switch self {
        case .shared: "shared (encoded once)"
        case .perConnection: "per connection (WebSocketFrameEncoder)"
        }
    }
}

/// Command-line options of the benchmark server.
struct ServerOptions {
    /// Usage text printed on a bad command line.
    static let usage = "usage: nio-broadcast [--host 127.0.0.1] [--port 0] [--threads N] [--per-connection-encoding]"

    /// A command-line error.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    var host = "127.0.0.1"
    var port = 0
    var threads = System.coreCount
    var encoding = BroadcastEncoding.shared

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            switch flag {
            case "--host":
                host = try Self.value(after: flag, in: &remaining)
            case "--port":
                port = try Self.integer(after: flag, in: &remaining, range: 0...65535)
            case "--threads":
                threads = try Self.integer(after: flag, in: &remaining, range: 1...256)
            case "--per-connection-encoding":
                encoding = .perConnection
            default:
                throw UsageError(description: "unknown argument \(flag)")
            }
        }
    }

    private static func value(after flag: String, in remaining: inout ArraySlice<String>) throws -> String {
        guard let value = remaining.popFirst() else { throw UsageError(description: "\(flag) needs a value") }
        return value
    }

    private static func integer(
        after flag: String, in remaining: inout ArraySlice<String>, range: ClosedRange<Int>
    ) throws -> Int {
        let text = try value(after: flag, in: &remaining)
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(description: "\(flag) must be an integer in \(range), got \(text)")
        }
        return number
    }
}
