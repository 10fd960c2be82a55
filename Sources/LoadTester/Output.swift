import Glibc

/// Writes `text` and a newline to standard output at once, unbuffered, so that a script reading a pipe sees it now.
func say(_ text: String) {
    writeText(text + "\n", to: STDOUT_FILENO)
}

/// Writes `text` and a newline to standard error.
func complain(_ text: String) {
    writeText(text + "\n", to: STDERR_FILENO)
}

/// Writes all of `text` to `descriptor`, unbuffered.
func writeText(_ text: String, to descriptor: Int32) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written < 0, errno == EINTR { continue }
        if written <= 0 { return }
        offset += written
    }
}

/// `value` with at most three decimals, for human output without Foundation.
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

/// Human forms of the report's numbers.
enum Human {
    /// An integer with thousands separators: `1,234,567`.
    static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(character)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A rate: `2.31 M/s`, `512.3 k/s`, `87.5/s`.
    static func rate(_ perSecond: Double) -> String {
        if perSecond >= 1e6 { return "\(rounded(perSecond / 1e6, places: 2)) M/s" }
        if perSecond >= 1e3 { return "\(rounded(perSecond / 1e3, places: 1)) k/s" }
        return "\(rounded(perSecond, places: 1))/s"
    }

    /// A latency given in microseconds: `850 µs`, `4.21 ms`, `1.35 s`.
    static func latency(_ microseconds: Double) -> String {
        if microseconds >= 1e6 { return "\(rounded(microseconds / 1e6, places: 2)) s" }
        if microseconds >= 1e3 { return "\(rounded(microseconds / 1e3, places: 2)) ms" }
        return "\(Int(microseconds.rounded())) µs"
    }

    /// Bytes: `1,843 B`, `12.4 MiB`.
    static func bytes(_ value: Double) -> String {
        if abs(value) >= 1_048_576 { return "\(rounded(value / 1_048_576, places: 1)) MiB" }
        return "\(count(Int(value.rounded()))) B"
    }

    /// `value` rounded to `places` decimals, without trailing zeros beyond them.
    static func rounded(_ value: Double, places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return format((value * scale).rounded() / scale)
    }
}
