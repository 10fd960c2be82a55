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
        switch leadByte {
        case 0xC2...0xDF:
            expect(continuations: 1, lower: 0x80, upper: 0xBF)
        case 0xE0:
            expect(continuations: 2, lower: 0xA0, upper: 0xBF)  // no overlong three-byte forms
        case 0xE1...0xEC, 0xEE...0xEF:
            expect(continuations: 2, lower: 0x80, upper: 0xBF)
        case 0xED:
            expect(continuations: 2, lower: 0x80, upper: 0x9F)  // no UTF-16 surrogates
        case 0xF0:
            expect(continuations: 3, lower: 0x90, upper: 0xBF)  // no overlong four-byte forms
        case 0xF1...0xF3:
            expect(continuations: 3, lower: 0x80, upper: 0xBF)
        case 0xF4:
            expect(continuations: 3, lower: 0x80, upper: 0x8F)  // nothing above U+10FFFF
        default:
            return false  // continuation byte without a lead, C0/C1 overlong leads, F5–FF
        }
        return true
    }

    private mutating func expect(continuations: UInt8, lower: UInt8, upper: UInt8) {
        pendingContinuations = continuations
        nextLowerBound = lower
        nextUpperBound = upper
    }
}
