/// Incremental UTF-8 validator (RFC 3629 §4) that fails on the first byte that cannot be part of valid UTF-8.
///
/// Text may arrive in arbitrary pieces (WebSocket fragments, TCP reads), so the validator carries the state of an
/// unfinished multi-byte sequence across calls. It rejects overlong forms, surrogates (U+D800–U+DFFF) and code
/// points above U+10FFFF at the earliest byte that proves them: after `E0` the next byte must be `A0–BF`, after `ED`
/// `80–9F`, after `F0` `90–BF`, after `F4` `80–8F`. RFC 6455 §8.1 lets an endpoint fail a text message as soon as
/// invalid data is seen, so a WebSocket peer can be closed (1007) before the rest of the message arrives.
///
/// Once a call returns `false` the validator stays failed until ``reset()``.
public struct UTF8Validator: Sendable {
    /// Continuation bytes still expected by the current sequence (0 between characters).
    private var pendingContinuations: UInt8 = 0
    /// Smallest allowed value of the next continuation byte.
    private var nextLowerBound: UInt8 = 0x80
    /// Largest allowed value of the next continuation byte.
    private var nextUpperBound: UInt8 = 0xBF
    /// Set once an invalid byte has been seen.
    private var hasFailed = false

    /// Creates a validator at the start of a text.
    public init() {}

    /// Whether the bytes seen so far end between characters (not inside a multi-byte sequence) and were all valid.
    public var isComplete: Bool { !hasFailed && pendingContinuations == 0 }

    /// Forgets all state, ready for a new text.
    public mutating func reset() {
        self = UTF8Validator()
    }

    /// Feeds the next piece of text; returns `false` as soon as a byte proves the text invalid.
    ///
    /// An unfinished sequence at the end of `bytes` is not an error here; check ``isComplete`` at the end of the text.
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !hasFailed else { return false }
        var index = 0
        let count = bytes.count
        while index < count {
            if pendingContinuations == 0 {
                // ASCII fast path: eight bytes at a time while no byte has its high bit set.
                while index + 8 <= count
                    && bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                guard index < count else { break }
                let byte = bytes[index]
                index += 1
                if byte < 0x80 { continue }
                guard beginSequence(leadByte: byte) else {
                    hasFailed = true
                    return false
                }
            } else {
                let byte = bytes[index]
                index += 1
                guard byte >= nextLowerBound && byte <= nextUpperBound else {
                    hasFailed = true
                    return false
                }
                pendingContinuations -= 1
                nextLowerBound = 0x80
                nextUpperBound = 0xBF
            }
        }
        return true
    }

    /// Feeds the next piece of text; same as the raw-buffer overload.
    public mutating func validate(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { validate($0) }
    }

    /// Whether `bytes` is, on its own, complete and valid UTF-8.
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) && validator.isComplete
    }

    /// Whether `bytes` is, on its own, complete and valid UTF-8.
    public static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { isValid($0) }
    }

    /// Sets up the expectations that follow a non-ASCII lead byte; returns `false` if it cannot start a sequence.
    private mutating func beginSequence(leadByte: UInt8) -> Bool {
        guard let sequence = Self.sequence(startingWith: leadByte) else { return false }
        pendingContinuations = UInt8(sequence.length - 1)
        nextLowerBound = sequence.secondLow
        nextUpperBound = sequence.secondHigh
        return true
    }
}

extension UTF8Validator {
    /// The well-formed byte sequences of UTF-8 (RFC 3629 §4, Unicode Table 3-7), written down once for every reader
    /// of text (this validator, the JSON scanner, the rules reader): for a lead byte, the sequence's length and the
    /// range its second byte must fall in (later bytes are `80–BF`); `nil` for a byte that cannot start one (a lone
    /// continuation byte, the overlong leads C0/C1, F5–FF). The second-byte ranges exclude overlong forms (after
    /// `E0`, `F0`), surrogates (after `ED`) and values above U+10FFFF (after `F4`).
    @inline(__always)
    public static func sequence(startingWith lead: UInt8) -> (length: Int, secondLow: UInt8, secondHigh: UInt8)? {
        switch lead {
        case 0x00...0x7F: return (1, 0x80, 0xBF)
        case 0xC2...0xDF: return (2, 0x80, 0xBF)
        case 0xE0: return (3, 0xA0, 0xBF)
        case 0xE1...0xEC, 0xEE...0xEF: return (3, 0x80, 0xBF)
        case 0xED: return (3, 0x80, 0x9F)
        case 0xF0: return (4, 0x90, 0xBF)
        case 0xF1...0xF3: return (4, 0x80, 0xBF)
        case 0xF4: return (4, 0x80, 0x8F)
        default: return nil
        }
    }

    /// The length of the well-formed sequence at `offset` of `bytes`, `nil` when none starts there (or it is cut off
    /// by the end).
    public static func sequenceLength(in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Int? {
        guard offset < bytes.count, let sequence = sequence(startingWith: bytes[offset]) else { return nil }
        guard offset + sequence.length <= bytes.count else { return nil }
        guard sequence.length > 1 else { return 1 }
        let second = bytes[offset + 1]
        guard second >= sequence.secondLow && second <= sequence.secondHigh else { return nil }
        for position in (offset + 2)..<(offset + sequence.length) where bytes[position] & 0xC0 != 0x80 {
            return nil
        }
        return sequence.length
    }

    /// The offset of the first byte of `bytes` that breaks well-formedness, or `bytes.count` when there is none.
    public static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var offset = 0
        while offset < bytes.count {
            guard let length = sequenceLength(in: bytes, at: offset) else { return offset }
            offset += length
        }
        return offset
    }
}
