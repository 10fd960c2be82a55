/// A position in a rules file: 1-based line and column, for error messages an editor can jump to.
///
/// Columns count Unicode scalars, not bytes, so a position after a non-ASCII character still lands on the right
/// character in an editor.
public struct SourcePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The line, starting at 1.
    public var line: Int
    /// The column, starting at 1.
    public var column: Int

    /// Creates a position.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// Earlier lines first, then earlier columns.
    public static func < (lhs: SourcePosition, rhs: SourcePosition) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }
}

/// Maps byte offsets of a source text to line and column positions.
struct LineIndex: Sendable {
    private let bytes: [UInt8]
    /// Byte offset where each line starts; line breaks are LF, CR LF or a lone CR.
    private let lineStarts: [Int]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        var starts = [0]
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\n") {
                starts.append(index)
            } else if byte == UInt8(ascii: "\r") {
                if index < bytes.count && bytes[index] == UInt8(ascii: "\n") { index += 1 }
                starts.append(index)
            }
        }
        lineStarts = starts
    }

    /// The position of the byte at `offset` (clamped to the text; the end of the text is a valid position).
    func position(of offset: Int) -> SourcePosition {
        let target = min(max(offset, 0), bytes.count)
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= target { low = middle } else { high = middle - 1 }
        }
        var column = 1
        var index = lineStarts[low]
        while index < target {
            if bytes[index] & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        // A position inside a multi-byte character names that character.
        if target < bytes.count && bytes[target] & 0xC0 == 0x80 { column -= 1 }
        return SourcePosition(line: low + 1, column: max(column, 1))
    }
}
