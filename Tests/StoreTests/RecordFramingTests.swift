@testable import Store
import Testing

@Suite("RecordFraming")
struct RecordFramingTests {
    static func framed(_ payloads: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for payload in payloads { RecordFraming.append(payload: payload, to: &bytes) }
        return bytes
    }

    static func scan(_ bytes: [UInt8]) -> (payloads: [[UInt8]], end: ScannedRecord, torn: Bool?) {
        bytes.withUnsafeBytes { raw in
            var scanner = RecordScanner(bytes: raw)
            var payloads: [[UInt8]] = []
            while true {
                let result = scanner.next()
                switch result {
                case .record(_, let payload):
                    payloads.append(Array(bytes[payload]))
                case .end:
                    return (payloads, result, nil)
                case .damaged(let offset, let damage):
                    return (payloads, result, scanner.isTornTail(at: offset, damage: damage))
                }
            }
        }
    }

    let payloads: [[UInt8]] = [[1], Array("hello".utf8), [UInt8](repeating: 7, count: 300)]

    @Test("records read back in order and end cleanly")
    func roundTrip() {
        let result = Self.scan(Self.framed(payloads))
        #expect(result.payloads == payloads)
        #expect(result.end == .end)
    }

    @Test("a file cut at any point inside the last record is a torn tail after the earlier records")
    func truncationIsTorn() {
        let bytes = Self.framed(payloads)
        let lastStart = Self.framed(Array(payloads.dropLast())).count
        for cut in (lastStart + 1)..<bytes.count {
            let result = Self.scan(Array(bytes[..<cut]))
            #expect(result.payloads == Array(payloads.dropLast()), "cut at \(cut)")
            #expect(result.torn == true, "cut at \(cut)")
        }
    }

    @Test("zero bytes after the last record are a torn tail")
    func zeroTailIsTorn() {
        let bytes = Self.framed(payloads) + [UInt8](repeating: 0, count: 4096)
        let result = Self.scan(bytes)
        #expect(result.payloads == payloads)
        #expect(result.torn == true)
    }

    @Test("a flipped bit in an earlier record is corruption at that record's offset")
    func flippedBitInTheMiddle() {
        var bytes = Self.framed(payloads)
        let secondStart = Self.framed([payloads[0]]).count
        for position in secondStart..<(secondStart + RecordFraming.headerSize + payloads[1].count) {
            var damaged = bytes
            damaged[position] ^= 0x10
            let result = Self.scan(damaged)
            #expect(result.payloads == [payloads[0]], "bit flipped at \(position)")
            guard case .damaged(let offset, _) = result.end else {
                Issue.record("no damage found for a bit flipped at \(position)")
                continue
            }
            #expect(offset == secondStart, "bit flipped at \(position)")
            #expect(result.torn == false, "bit flipped at \(position)")
        }
        bytes[bytes.count - 1] ^= 1
        #expect(Self.scan(bytes).torn == true, "a bad checksum in the final record is a torn write")
    }
}

