import DataModel
import Primitives
import Wire

/// A write's request encoded where the write was made (the app's thread), all but its number, which the connection
/// gives it when it sends it: the connection's thread then copies bytes instead of encoding JSON.
struct PreparedRequest: Sendable {
    /// `{"t":"d","d":{"r":`, the same for every request.
    private static let head = ClientMessage.requestHead
    /// What follows the number: the action, its body, the envelope's end.
    private let tail: [UInt8]

    init(_ action: ClientAction) {
        tail = ClientMessage.requestTail(for: action)
    }

    /// A put of `json` at `path`, the JSON text the value conversion wrote (and checked in the same pass, see
    /// ``ValueWriter``), copied rather than encoded again.
    init(putAt path: Path, json: [UInt8]) {
        tail = ClientMessage.putRequestTail(at: path, data: json)
    }

    /// The message's length in bytes with `number`.
    func count(number: Int) -> Int {
        Self.head.count + decimalDigitCount(UInt64(number)) + tail.count
    }

    /// Writes the message numbered `number` into `output`, which holds exactly ``count(number:)`` bytes.
    func write(number: Int, into output: UnsafeMutableRawBufferPointer) {
        var offset = 0
        Self.head.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: output[offset...]).copyMemory(from: $0) }
        offset += Self.head.count
        let digits = decimalDigitCount(UInt64(number))
        var rest = number
        for index in stride(from: offset + digits - 1, through: offset, by: -1) {
            output[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        offset += digits
        tail.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: output[offset...]).copyMemory(from: $0) }
    }

    /// The whole message numbered `number` (for one too long for a single frame).
    func message(number: Int) -> [UInt8] {
        let count = count(number: number)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            write(number: number, into: UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[..<count])))
            initialized = count
        }
    }
}
