/// How many digits `value` has in decimal (1 for 0): the length of a number written as ASCII, computed before it is.
public func decimalDigitCount(_ value: UInt64) -> Int {
    var digits = 1
    var rest = value / 10
    while rest > 0 {
        digits += 1
        rest /= 10
    }
    return digits
}
