import DataModel
import Primitives

extension ClientMessage {
    /// The messages a busy writer sends by the thousand, `{"t":"d","d":{"r":N,"a":"p","b":{"p":"PATH","d":DATA}}}`
    /// (a put, as every SDK spells it: members in this order, no spaces) and the same with `"a":"m"` (a merge),
    /// recognized by their exact bytes.
    ///
    /// The general parser splits each of the three envelope objects into members, decoding their keys and
    /// validating everything under them each time, so a put's data was scanned three times before it was read:
    /// over a third of a write's server CPU. Here the envelope is matched byte for byte and the data read once
    /// (docs/benchmarks.md, "Four cuts on the delivery and write paths").
    ///
    /// Only a message the general parser reads the same way is taken: a path of printable ASCII without escapes or
    /// `.`, a request number of 1 to 15 digits without a leading zero, and data that is exactly one JSON value up to
    /// the closing `}}}` (for a merge, an object). The data and the path are read by the same readers with the same
    /// limits. Anything else, including every message that is not valid, returns `nil`, and ``parse(_:limits:)``
    /// decides as before, with its errors.
    static func frequentWrite(_ bytes: UnsafeRawBufferPointer, limits: DataLimits) -> ClientMessage? {
        let prefix = FrequentWrite.prefix
        let beforeAction = FrequentWrite.beforeAction
        let beforePath = FrequentWrite.beforePath
        let beforeData = FrequentWrite.beforeData
        let suffix = FrequentWrite.suffix
        let middleCount = beforeAction.count + 1 + beforePath.count
        guard bytes.count > prefix.count + middleCount + beforeData.count + suffix.count,
              ASCIIBytes.matches(bytes, at: 0, prefix), ASCIIBytes.matches(bytes, at: bytes.count - suffix.count, suffix),
              case let (number, index)? = ASCIIBytes.jsonInteger(
                in: bytes, at: prefix.count, maxDigits: FrequentWrite.maxNumberDigits),
              ASCIIBytes.matches(bytes, at: index, beforeAction), index + middleCount < bytes.count,
              ASCIIBytes.matches(bytes, at: index + beforeAction.count + 1, beforePath)
        else { return nil }
        let action = bytes[index + beforeAction.count]
        guard action == UInt8(ascii: "p") || action == UInt8(ascii: "m") else { return nil }
        // The path: printable ASCII up to its closing quote, no escape, no `.` (a priority target).
        let pathStart = index + middleCount
        var pathEnd = pathStart
        while pathEnd < bytes.count {
            let byte = bytes[pathEnd]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: ".") else { return nil }
            pathEnd += 1
        }
        let dataStart = pathEnd + beforeData.count
        let dataEnd = bytes.count - suffix.count
        guard dataStart < dataEnd, ASCIIBytes.matches(bytes, at: pathEnd, beforeData),
              let path = Path(validatingUTF8: UnsafeRawBufferPointer(rebasing: bytes[pathStart..<pathEnd]), limits: limits)
        else { return nil }
        let data = UnsafeRawBufferPointer(rebasing: bytes[dataStart..<dataEnd])
        if action == UInt8(ascii: "m") {
            guard data[0] == UInt8(ascii: "{"),
                  let entries = try? JSONReader.readUpdate(data, depth: path.depth, limits: limits, maxBytes: Int.max)
            else { return nil }
            return .request(ClientRequest(number: number, action: .merge(MergeRequest(path: path, entries: entries))))
        }
        guard let value = try? JSONReader.readData(data, depth: path.depth, limits: limits, maxBytes: Int.max)
        else { return nil }
        return .request(ClientRequest(number: number, action: .put(PutRequest(target: .node(path), value: value))))
    }
}

/// The fixed bytes of a frequent write (``ClientMessage/frequentWrite(_:limits:)``), around the request number,
/// the action's letter, the path and the data.
private enum FrequentWrite {
    static let prefix = Array(#"{"t":"d","d":{"r":"#.utf8)
    static let beforeAction = Array(#","a":""#.utf8)
    static let beforePath = Array(#"","b":{"p":""#.utf8)
    static let beforeData = Array(#"","d":"#.utf8)
    static let suffix = Array("}}}".utf8)
    /// Most digits of a request number taken here: any 15-digit number is exact (below 2^53).
    static let maxNumberDigits = 15
}
