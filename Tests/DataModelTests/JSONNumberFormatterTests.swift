import Testing

@testable import DataModel

@Suite("JSONNumberFormatter")
struct JSONNumberFormatterTests {
    /// Expected strings are what V8's `String(x)` / `JSON.stringify(x)` print.
    @Test("prints numbers as JavaScript does", arguments: [
        (0.0, "0"), (-0.0, "0"), (1, "1"), (-1, "-1"), (0.1, "0.1"), (1.5, "1.5"), (-1.5e-10, "-1.5e-10"),
        (100, "100"), (123.456, "123.456"), (4.5623, "4.5623"), (1.0 / 3.0, "0.3333333333333333"),
        (2.0 / 3.0, "0.6666666666666666"), (1e21, "1e+21"), (1.1e21, "1.1e+21"), (1e20, "100000000000000000000"),
        (123456789012345680000, "123456789012345680000"), (9_007_199_254_740_992, "9007199254740992"),
        (9_007_199_254_740_991, "9007199254740991"), (1_152_921_504_606_846_976, "1152921504606847000"),
        (1.7976931348623157e308, "1.7976931348623157e+308"), (-1.7976931348623157e308, "-1.7976931348623157e+308"),
        (5e-324, "5e-324"), (1e-7, "1e-7"), (1.234e-7, "1.234e-7"), (1e-6, "0.000001"), (0.000001234, "0.000001234"),
        (1e300, "1e+300"), (0.5, "0.5"), (1718049600000, "1718049600000"), (12345.678, "12345.678"),
        (1e16, "10000000000000000"), (1.5e16, "15000000000000000"), (0.1 + 0.2, "0.30000000000000004"),
    ])
    func javascriptLayout(value: Double, expected: String) {
        #expect(JSONNumberFormatter.string(value) == expected)
    }

    @Test("round-trips random doubles through the reader")
    func roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let value = Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF)  // finite, positive
            let text = JSONNumberFormatter.string(value)
            let parsed = try JSONReader.readValue(Array(text.utf8))
            #expect(parsed == .number(value), "\(value) printed as \(text)")
        }
    }
}
