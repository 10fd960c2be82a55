/// One value of a rules file as read by ``RulesDocumentReader``: JSON with the byte offset of every value, so later
/// checks can report file positions.
struct RulesDocumentValue: Sendable {
    /// What kind of JSON value this is.
    enum Kind: Sendable {
        case object([Member])
        case array([RulesDocumentValue])
        case string(DecodedString)
        case number
        case bool(Bool)
        case null
    }

    /// An object member with the offset of its key's opening quote.
    struct Member: Sendable {
        var key: String
        var keyOffset: Int
        var value: RulesDocumentValue
    }

    var kind: Kind
    /// Offset of the value's first byte in the file.
    var offset: Int

    /// A short name of the value's JSON type, for messages.
    var typeName: String {
        switch kind {
        case .object: return "an object"
        case .array: return "an array"
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        }
    }
}

/// A decoded JSON string with, for every decoded UTF-8 byte, the file offset of the source text that produced it —
/// so an error at byte 7 of an expression is reported at the right line and column even after `\\` escapes and raw
/// line breaks.
struct DecodedString: Sendable {
    /// The decoded UTF-8 bytes.
    var bytes: [UInt8]
    /// `sourceOffsets[i]` is the file offset of decoded byte `i`; one extra entry for the closing quote.
    var sourceOffsets: [Int]

    /// The decoded text.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The file offset of decoded byte `index` (the closing quote for the end of the string).
    func sourceOffset(of index: Int) -> Int {
        sourceOffsets[min(max(index, 0), sourceOffsets.count - 1)]
    }
}
