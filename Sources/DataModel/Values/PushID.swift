/// Generates Firebase push ids: 20 characters, time-ordered, strictly increasing per generator (data-model.md §9).
///
/// Characters 1–8 are the millisecond timestamp in base 64 (most significant first); characters 9–20 are 72 random
/// bits. Two ids in the same millisecond (or with a clock that went backwards) reuse the previous random part plus
/// one, with carry, exactly like the SDK's `nextPushId`, so ids from one generator sort in generation order. The
/// alphabet is in ASCII order, so lexicographic order is chronological order. A generator is a value owned by one
/// queue (the server keeps one per namespace for REST `POST`).
public struct PushIDGenerator: Sendable {
    /// The 64-character alphabet, in ASCII order.
    public static let alphabet: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    private var lastTimestamp: Int64 = -1
    private var lastRandom: [UInt8] = Array(repeating: 0, count: 12)
    private var randomNumbers: any RandomNumberGenerator & Sendable

    /// A generator using the system random number generator.
    public init() {
        randomNumbers = SystemRandomNumberGenerator()
    }

    /// A generator with a custom random source (tests use a seeded one).
    public init(randomNumbers: any RandomNumberGenerator & Sendable) {
        self.randomNumbers = randomNumbers
    }

    /// The next id for `timestamp` milliseconds since the Unix epoch.
    ///
    /// When `timestamp` is not later than the previous call's, the previous timestamp is kept and the random part
    /// incremented, so ids stay strictly increasing even if the clock steps back.
    public mutating func next(timestamp: Int64) -> String {
        if timestamp > lastTimestamp {
            lastTimestamp = timestamp
            for index in 0..<12 { lastRandom[index] = UInt8.random(in: 0..<64, using: &randomNumbers) }
        } else {
            var index = 11
            while index >= 0 && lastRandom[index] == 63 {
                lastRandom[index] = 0
                index -= 1
            }
            if index >= 0 {
                lastRandom[index] += 1
            } else {
                // All 72 random bits overflowed (2^72 ids in one millisecond): move to the next millisecond.
                lastTimestamp += 1
            }
        }
        var id = [UInt8](repeating: 0, count: 20)
        var remaining = max(lastTimestamp, 0)
        for index in stride(from: 7, through: 0, by: -1) {
            id[index] = Self.alphabet[Int(remaining % 64)]
            remaining /= 64
        }
        for index in 0..<12 { id[8 + index] = Self.alphabet[Int(lastRandom[index])] }
        return String(decoding: id, as: UTF8.self)
    }

    /// The id of the write with log sequence number `sequence`, sequenced at `timestamp` milliseconds: the
    /// timestamp in characters 1–8 and the sequence number in the 72 bits of characters 9–20. Ids of one
    /// namespace's log are unique and increase with the log (its timestamps never decrease), and replaying the
    /// log gives the same ids.
    public static func id(timestamp: Int64, sequence: UInt64) -> String {
        var id = [UInt8](repeating: 0, count: 20)
        var remaining = max(timestamp, 0)
        for index in stride(from: 7, through: 0, by: -1) {
            id[index] = alphabet[Int(remaining % 64)]
            remaining /= 64
        }
        var bits = sequence
        for index in stride(from: 19, through: 8, by: -1) {
            id[index] = alphabet[Int(bits % 64)]
            bits /= 64
        }
        return String(decoding: id, as: UTF8.self)
    }

    /// The timestamp encoded in the first 8 characters of a push id, `nil` if `id` is not one.
    public static func timestamp(of id: String) -> Int64? {
        let bytes = Array(id.utf8)
        guard bytes.count == 20 else { return nil }
        var value: Int64 = 0
        for byte in bytes.prefix(8) {
            guard let digit = alphabet.firstIndex(of: byte) else { return nil }
            value = value * 64 + Int64(digit)
        }
        return value
    }
}
