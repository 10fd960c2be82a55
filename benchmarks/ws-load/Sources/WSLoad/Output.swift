import Glibc

/// Writes `text` and a newline to standard output at once, unbuffered, so that a script reading a pipe sees it now.
func say(_ text: String) {
    writeLine(text, to: STDOUT_FILENO)
}

/// Writes `text` and a newline to standard error.
func complain(_ text: String) {
    writeLine(text, to: STDERR_FILENO)
}

private func writeLine(_ text: String, to descriptor: Int32) {
    let line = Array((text + "\n").utf8)
    var offset = 0
    while offset < line.count {
        let written = line[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        offset += written
    }
}

/// Builds the one-line JSON summary that scripts parse (numbers and plain ASCII strings only).
struct JSONLine {
    private var fields: [String] = []

    mutating func add(_ key: String, _ value: String) {
        fields.append("\"\(key)\":\"\(value)\"")
    }

    mutating func add(_ key: String, _ value: Int) {
        fields.append("\"\(key)\":\(value)")
    }

    mutating func add(_ key: String, _ value: Double) {
        fields.append("\"\(key)\":\(value.isFinite ? format(value) : "null")")
    }

    mutating func add(_ key: String, _ value: Bool) {
        fields.append("\"\(key)\":\(value)")
    }

    var text: String { "{" + fields.joined(separator: ",") + "}" }
}

/// `value` with at most three decimals, for human and JSON output without Foundation.
func format(_ value: Double) -> String {
    guard value.isFinite else { return "nan" }
    let scaled = (value * 1000).rounded()
    guard abs(scaled) < 9e15 else { return String(value) }
    let integer = Int(scaled)
    let sign = integer < 0 ? "-" : ""
    let magnitude = abs(integer)
    let fraction = magnitude % 1000
    var fractionText = String(fraction)
    while fractionText.count < 3 { fractionText = "0" + fractionText }
    while fractionText.hasSuffix("0") { fractionText.removeLast() }
    return sign + String(magnitude / 1000) + (fractionText.isEmpty ? "" : "." + fractionText)
}
