import Foundation

/// The line protocol between a run and its worker processes (one JSON object or command per line).
///
/// Parent → worker, on standard input: a ``WorkerAssignment``, then `start <nanoseconds>` once every worker is
/// connected, then `stop`. Worker → parent, on standard output: ``WorkerMessage``s — connect progress while
/// connecting, live counts and finished intervals while running, and the result after `stop`.
enum WorkerProtocol {
    static let startCommand = "start"
    static let stopCommand = "stop"

    /// One line of JSON for `value`.
    static func line(_ value: some Encodable) throws -> [UInt8] {
        Array(try JSONEncoder().encode(value)) + [UInt8(ascii: "\n")]
    }

    /// Decodes one line.
    static func decode<Value: Decodable>(_ type: Value.Type, from line: ArraySlice<UInt8>) throws -> Value {
        try JSONDecoder().decode(type, from: Data(line))
    }
}

/// What a worker process is to do: its share of the run.
struct WorkerAssignment: Codable {
    var configuration: BenchConfiguration
    /// This process's slot of `slots`.
    var slot: Int
    var slots: Int
    /// The parent's clock origin, so that every process writes and reads the same send times.
    var clockOrigin: UInt64
}

/// One report from a worker process.
struct WorkerMessage: Codable {
    enum Kind: String, Codable {
        case connect, live, result, failure
    }

    var kind: Kind
    var opened = 0
    var failed = 0
    var settled = false
    var live = LiveCounts()
    var intervals: [IntervalSample] = []
    var result: WorkerResult?
    var error: String?
}

/// Writes all of `bytes` to a blocking descriptor; false when it is closed.
@discardableResult
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        guard written > 0 else { return false }
        offset += written
    }
    return true
}

/// Complete lines read from a descriptor, keeping a partial last line for the next read.
struct LineReader {
    private var pending: [UInt8] = []
    /// Whether the other end closed the descriptor.
    private(set) var closed = false

    /// Reads what is available now (the descriptor is non-blocking) and returns the complete lines.
    mutating func readLines(_ fd: Int32) -> [ArraySlice<UInt8>] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                pending.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                closed = true
                break
            } else if errno == EINTR {
                continue
            } else {
                break
            }
        }
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(pending[start..<newline])
            start = newline + 1
        }
        let complete = lines.map { ArraySlice(Array($0)) }
        pending.removeFirst(start)
        return complete
    }
}
