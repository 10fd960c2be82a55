/// How snapshots record the rules revision in force: `varint version`, then `0` (no rules) or
/// `1 varint(n) byte*n` (the rules' source text).
extension BinaryWriter {
    mutating func writeRules(_ rules: RulesRevision) {
        writeVarint(rules.version)
        guard let source = rules.source else { return write(0) }
        write(1)
        writeVarint(source.count)
        bytes.append(contentsOf: source)
    }
}

extension BinaryReader {
    mutating func readRules() throws(BinaryDecodingError) -> RulesRevision {
        let version = try readVarint()
        switch try readByte() {
        case 0: return RulesRevision(version: version, source: nil)
        case 1:
            let count = try readCount(limit: remainingCount)
            var source: [UInt8] = []
            source.reserveCapacity(count)
            for _ in 0..<count { source.append(try readByte()) }
            return RulesRevision(version: version, source: source)
        default: throw failure("unknown rules form")
        }
    }
}
