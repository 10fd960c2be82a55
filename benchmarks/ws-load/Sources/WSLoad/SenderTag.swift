/// The first bytes of every broadcast payload: the sender's index as 8 ASCII digits, so that a sender can tell its
/// own messages from other senders' when it applies its in-flight window.
enum SenderTag {
    /// Bytes of the tag at the start of the payload.
    static let length = 8

    /// The tag of sender `index` as the payload's first bytes.
    static func bytes(of index: Int) -> [UInt8] {
        var digits = [UInt8](repeating: UInt8(ascii: "0"), count: length)
        var value = index
        var position = length - 1
        while value > 0, position >= 0 {
            digits[position] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            position -= 1
        }
        return digits
    }

    /// The tag packed into one integer (first byte most significant), for a cheap comparison.
    static func packed(of index: Int) -> UInt64 {
        bytes(of: index).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
