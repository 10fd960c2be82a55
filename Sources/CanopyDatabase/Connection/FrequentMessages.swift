import DataModel
import Primitives
import Wire

/// The two messages a busy client gets by the thousand, recognized by the exact bytes the server writes for them:
/// a write's acknowledgement, `{"t":"d","d":{"r":N,"b":{"s":"ok","d":""}}}`, and a push of one location's data,
/// `{"t":"d","d":{"a":"d","b":{"p":"PATH","d":DATA}}}`. Recognizing them skips the general parser's envelope
/// (its member lists and key strings), which cost more than the rest of an acknowledgement's handling.
///
/// Anything else, including these messages with other spacing, member order or escapes, a tag, or data that does
/// not parse, is left to ``ServerMessage/parse(_:limits:)``, so what the client understands does not change.
///
/// The path of the last push is kept with its bytes: a client observing one location gets the same path each time,
/// and reading it again cost a quarter of a push.
struct FrequentMessages {
    private static let responsePrefix = Array(#"{"t":"d","d":{"r":"#.utf8)
    private static let emptyOKSuffix = Array(#","b":{"s":"ok","d":""}}}"#.utf8)
    private static let pushPrefix = Array(#"{"t":"d","d":{"a":"d","b":{"p":""#.utf8)
    private static let pushDataMember = Array(#"","d":"#.utf8)
    private static let pushSuffix = Array("}}}".utf8)
    /// Most digits of a request number taken here (the general parser takes longer ones).
    private static let maxNumberDigits = 15
    /// The last push's path, and its bytes.
    private var lastPath: (bytes: [UInt8], path: Path)?

    /// The message, when `bytes` are one of the two; `nil` otherwise.
    mutating func parse(_ bytes: [UInt8]) -> ServerMessage? {
        bytes.withUnsafeBufferPointer { message in
            if let number = Self.acknowledgedRequest(message) {
                return .response(requestNumber: number, status: .ok, payload: .text(""))
            }
            return dataPush(message)
        }
    }

    /// The request number of an empty `ok` answer.
    private static func acknowledgedRequest(_ message: UnsafeBufferPointer<UInt8>) -> Int? {
        let bytes = UnsafeRawBufferPointer(message)
        guard message.count > responsePrefix.count + emptyOKSuffix.count,
              hasPrefix(message, responsePrefix), hasSuffix(message, emptyOKSuffix),
              case let (number, end)? = ASCIIBytes.jsonInteger(
                in: bytes, at: responsePrefix.count, maxDigits: maxNumberDigits),
              end == message.count - emptyOKSuffix.count
        else { return nil }
        return number
    }

    /// A data push without a tag, its path free of escapes.
    private mutating func dataPush(_ message: UnsafeBufferPointer<UInt8>) -> ServerMessage? {
        guard message.count > Self.pushPrefix.count + Self.pushDataMember.count + Self.pushSuffix.count,
              Self.hasPrefix(message, Self.pushPrefix), Self.hasSuffix(message, Self.pushSuffix)
        else { return nil }
        let pathStart = Self.pushPrefix.count
        var pathEnd = pathStart
        var ascii = true
        while pathEnd < message.count, message[pathEnd] != UInt8(ascii: "\"") {
            // An escape or a control character: the general parser decides.
            guard message[pathEnd] != UInt8(ascii: "\\"), message[pathEnd] >= 0x20 else { return nil }
            ascii = ascii && message[pathEnd] < 0x80
            pathEnd += 1
        }
        let pathBytes = UnsafeBufferPointer(rebasing: message[pathStart..<pathEnd])
        let dataStart = pathEnd + Self.pushDataMember.count
        let dataEnd = message.count - Self.pushSuffix.count
        guard dataStart < dataEnd,
              Self.same(message, at: pathEnd, as: Self.pushDataMember),
              let path = path(pathBytes, ascii: ascii),
              let data = try? JSONReader.readData(
                UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: message[dataStart..<dataEnd])),
                depth: path.depth, limits: .default, maxBytes: Int.max)
        else { return nil }
        return .dataPush(path: path, data: data.node, tag: nil)
    }

    /// The path `bytes` spell (`ascii`: none is past 0x7F), from the last push's when they are the same.
    private mutating func path(_ bytes: UnsafeBufferPointer<UInt8>, ascii: Bool) -> Path? {
        if let lastPath, lastPath.bytes.count == bytes.count, Self.same(bytes, at: 0, as: lastPath.bytes) {
            return lastPath.path
        }
        guard ascii || UTF8Validator.isValid(UnsafeRawBufferPointer(bytes)),
              let path = try? Path(String(decoding: bytes, as: UTF8.self))
        else { return nil }
        lastPath = (Array(bytes), path)
        return path
    }

    private static func hasPrefix(_ message: UnsafeBufferPointer<UInt8>, _ prefix: [UInt8]) -> Bool {
        same(message, at: 0, as: prefix)
    }

    private static func hasSuffix(_ message: UnsafeBufferPointer<UInt8>, _ suffix: [UInt8]) -> Bool {
        same(message, at: message.count - suffix.count, as: suffix)
    }

    /// Whether `message` holds `expected` at `offset`.
    private static func same(_ message: UnsafeBufferPointer<UInt8>, at offset: Int, as expected: [UInt8]) -> Bool {
        ASCIIBytes.matches(UnsafeRawBufferPointer(message), at: offset, expected)
    }
}
