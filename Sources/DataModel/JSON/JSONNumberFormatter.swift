import Primitives

/// Formats doubles exactly as JavaScript's `Number.prototype.toString` (ECMA-262 §6.1.6.1.20), which is what
/// `JSON.stringify` and therefore the Firebase JS SDK emit.
///
/// The shortest round-trip digits come from Swift's own `description` (shortest and closest, like ECMA-262
/// requires); only the layout is JavaScript's: plain digits while the decimal exponent n ≤ 21 (`1e21` prints
/// `1e+21`, `1e20` prints `100000000000000000000`), `0.000001` down to n > -6 (`1e-7` prints `1e-7`), exponents with
/// an explicit sign, no trailing `.0`, and `-0` as `0`. Integers below 2^53 take a fast path without `description`.
public enum JSONNumberFormatter {
    /// The JavaScript text of `value`; `value` must be finite.
    public static func string(_ value: Double) -> String {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the JavaScript text of `value` (finite) to `bytes`.
    public static func append(_ value: Double, to bytes: inout [UInt8]) {
        precondition(value.isFinite, "JSON numbers must be finite")
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        if value.magnitude < 9_007_199_254_740_992, value == value.rounded(.towardZero) {
            appendInteger(Int64(value), to: &bytes)
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let (digits, exponent) = shortestDigits(value.magnitude)
        layOut(digits: digits, exponent: exponent, to: &bytes)
    }

    /// Appends a decimal integer.
    static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        ASCIIBytes.appendDecimal(value.magnitude, to: &bytes)
    }

    /// The shortest round-trip decimal digits of a positive finite double and its exponent n such that
    /// value = 0.d₁d₂…dₖ × 10ⁿ (ECMA-262's n).
    static func shortestDigits(_ value: Double) -> (digits: [UInt8], exponent: Int) {
        var digits: [UInt8] = []
        var pointPosition: Int?
        var explicitExponent = 0
        var exponentNegative = false
        var inExponent = false
        for byte in value.description.utf8 {
            if inExponent {
                switch byte {
                case UInt8(ascii: "-"): exponentNegative = true
                case UInt8(ascii: "+"): break
                default: explicitExponent = explicitExponent * 10 + Int(byte - UInt8(ascii: "0"))
                }
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                inExponent = true
            } else if byte == UInt8(ascii: ".") {
                pointPosition = digits.count
            } else {
                digits.append(byte)
            }
        }
        if exponentNegative { explicitExponent = -explicitExponent }
        // value = 0.(digits) × 10^(pointPosition + explicitExponent); strip leading and trailing zeros.
        var exponent = (pointPosition ?? digits.count) + explicitExponent
        var leading = 0
        while leading < digits.count - 1 && digits[leading] == UInt8(ascii: "0") {
            leading += 1
            exponent -= 1
        }
        var trailing = digits.count
        while trailing > leading + 1 && digits[trailing - 1] == UInt8(ascii: "0") { trailing -= 1 }
        return (Array(digits[leading..<trailing]), exponent)
    }

    /// ECMA-262 Number::toString steps 5–10 for digits d₁…dₖ and exponent n.
    static func layOut(digits: [UInt8], exponent n: Int, to bytes: inout [UInt8]) {
        let k = digits.count
        if k <= n && n <= 21 {
            bytes.append(contentsOf: digits)
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: n - k))
        } else if 0 < n && n <= 21 {
            bytes.append(contentsOf: digits[..<n])
            bytes.append(UInt8(ascii: "."))
            bytes.append(contentsOf: digits[n...])
        } else if -6 < n && n <= 0 {
            bytes.append(UInt8(ascii: "0"))
            bytes.append(UInt8(ascii: "."))
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: -n))
            bytes.append(contentsOf: digits)
        } else {
            bytes.append(digits[0])
            if k > 1 {
                bytes.append(UInt8(ascii: "."))
                bytes.append(contentsOf: digits[1...])
            }
            bytes.append(UInt8(ascii: "e"))
            bytes.append(n - 1 >= 0 ? UInt8(ascii: "+") : UInt8(ascii: "-"))
            appendInteger(Int64((n - 1).magnitude), to: &bytes)
        }
    }
}
