/// Re-indents compact JSON the way Firebase's `print=pretty` does (rest-api.md §3): two spaces per level,
/// `"key" : value`, one member or element per line, empty containers kept as `{ }` and `[ ]`.
enum PrettyJSON {
    /// `compact` re-indented; the input must be valid JSON without insignificant whitespace (what ``JSONWriter``
    /// produces), so only string boundaries need tracking.
    static func format(_ compact: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(compact.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        var index = 0
        func newline() {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
        }
        while index < compact.count {
            let byte = compact[index]
            index += 1
            if inString {
                output.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
                output.append(byte)
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let closing = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if index < compact.count, compact[index] == closing {
                    output.append(contentsOf: [byte, UInt8(ascii: " "), closing])
                    index += 1
                } else {
                    output.append(byte)
                    depth += 1
                    newline()
                }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                newline()
                output.append(byte)
            case UInt8(ascii: ","):
                output.append(byte)
                newline()
            case UInt8(ascii: ":"):
                output.append(contentsOf: [UInt8(ascii: " "), byte, UInt8(ascii: " ")])
            default:
                output.append(byte)
            }
        }
        return output
    }
}
