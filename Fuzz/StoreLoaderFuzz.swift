// libFuzzer entry for the journal and snapshot loaders (Sources/Store); built by `scripts/fuzz StoreLoaderFuzz`, which
// compiles this file together with Sources/Primitives, Sources/DataModel and Sources/Store as one module (so there is
// no `import Store` here).
//
// The first input byte picks one of three modes; the rest drives it:
// 0. hostile bytes: decoded as a node, a log entry, a cluster proposal and (with its checksum fixed up) a replica
//    snapshot, and wrapped in valid framing (magic, framed header, checksummed sections) as a state snapshot. Errors must carry offsets inside the bytes or name the file; what
//    decodes must re-encode and decode equal.
// 1. damaged journals: log entries built from the input are written as 1–3 journal segments after an empty state
//    snapshot, then one segment is truncated or has one bit flipped. `LogLoader` (read-only, with and without repair)
//    must give the tree of exactly the entries before the damage, or refuse with the damaged file and the offset of
//    the damaged record; a truncated last segment (a torn final write) must load.
// 2. damaged snapshots: a tree built from the input is written as a state snapshot and encoded as a replica
//    snapshot; both must read back equal, and every truncated or bit-flipped copy must be refused.
// Files go to a directory under /tmp that is removed at exit. Any crash, sanitizer report or broken invariant
// (reported by trapping) is a finding.

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Files

/// The directory this process writes to.
private let workDirectory: String = {
    var template = Array("/tmp/canopy-storefuzz-XXXXXX".utf8CString)
    guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
        fatalError("mkdtemp failed")
    }
    atexit { removeTree(workDirectory) }
    return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()

/// A namespace directory whose state snapshot is empty (written once), for the journal mode.
private let namespace: NamespaceFiles = {
    let files = NamespaceFiles(directory: workDirectory + "/namespace")
    do {
        try FileSystem.makeDirectories(files.logDirectory)
        try StateSnapshotFile.write(
            StateSnapshotFile.Contents(root: .empty, sequence: 0, timestamp: 0, rules: .initial), to: files.statePath)
    } catch {
        fatalError("cannot prepare \(files.directory): \(error)")
    }
    return files
}()

private func removeTree(_ path: String) {
    if FileSystem.isDirectory(path) {
        for name in (try? FileSystem.listDirectory(path)) ?? [] { removeTree(path + "/" + name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// Writes `bytes` to `path` (no fsync: nothing here has to survive a crash).
private func writeFile(_ path: String, _ bytes: [UInt8]) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    precondition(descriptor >= 0, "cannot create \(path)")
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    precondition(written == bytes.count, "cannot write \(path)")
}

// MARK: - Building valid data from input bytes

/// Input bytes consumed front to back; zeros once exhausted.
private struct ByteSource {
    var remaining: ArraySlice<UInt8>

    var isEmpty: Bool { remaining.isEmpty }

    mutating func next() -> UInt8 { remaining.popFirst() ?? 0 }

    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        defer { remaining = remaining.dropFirst(count) }
        return remaining.prefix(count)
    }

    /// A number below `bound` from two bytes.
    mutating func below(_ bound: Int) -> Int {
        (Int(next()) << 8 | Int(next())) % max(bound, 1)
    }
}

private let keyPool = ["a", "b", "c", "0", "1", "10", "-5", "users", "z~", "é", "😀", "with space"]
    .map(Key.init(trusted:))

private func makeKey(_ source: inout ByteSource) -> Key {
    keyPool[Int(source.next()) % keyPool.count]
}

private func makePath(_ source: inout ByteSource) -> Path {
    Path(keys: (0..<Int(source.next() % 4)).map { _ in makeKey(&source) })
}

/// A node of at most `levels` levels.
private func makeNode(_ source: inout ByteSource, levels: Int) -> Node {
    var node: Node
    switch source.next() % 5 {
    case 0: node = Node(.bool(source.next() & 1 == 1))
    case 1: node = Node(.number(Double(Int16(bitPattern: UInt16(source.next()) << 8 | UInt16(source.next()))) / 8))
    case 2: node = Node(.string(String(decoding: source.take(Int(source.next() % 12)), as: UTF8.self)))
    default:
        node = .empty
        if levels > 0 {
            for _ in 0..<(1 + source.next() % 3) {
                node.set(makeNode(&source, levels: levels - 1), at: Path(keys: [makeKey(&source)]))
            }
        }
        if node.isEmpty { node = Node(.string("leaf")) }
    }
    switch source.next() % 4 {
    case 0: node.setPriority(.number(Double(source.next())))
    case 1: node.setPriority(.string(String(decoding: source.take(3), as: UTF8.self)))
    default: break
    }
    return node
}

/// Log entries from sequence 1 on: writes of every kind and, now and then, a rules revision without source.
private func makeEntries(_ source: inout ByteSource) -> [LogEntry] {
    var entries: [LogEntry] = []
    var rulesVersion: UInt64 = 0
    while !source.isEmpty && entries.count < 12 {
        let sequence = UInt64(entries.count + 1)
        let timestamp = 1_700_000_000_000 + Double(sequence)
        let operation: LogOperation
        let path = makePath(&source)
        switch source.next() % 6 {
        case 0:
            rulesVersion += 1
            operation = .rules(RulesRevision(version: rulesVersion, source: nil))
        case 1:
            let first = makeKey(&source)
            let second = keyPool[(keyPool.firstIndex(of: first)! + 1) % keyPool.count]
            let update = StoreWrite.update(path, [
                UpdateEntry(target: .node(Path(keys: [first])), value: WriteValue(node: makeNode(&source, levels: 2))),
                UpdateEntry(target: .priority(of: Path(keys: [second])), value: WriteValue(node: Node(.number(2)))),
            ])
            operation = .write(update, caller: .privileged, rulesVersion: rulesVersion)
        case 2:
            let push = StoreWrite.push(path, WriteValue(node: makeNode(&source, levels: 2)))
            operation = .write(push, caller: .user(auth: .object([("uid", .string("u1"))])), rulesVersion: rulesVersion)
        default:
            let set = StoreWrite.set(.node(path), WriteValue(node: makeNode(&source, levels: 3)), expectedHash: nil)
            operation = .write(set, caller: .privileged, rulesVersion: rulesVersion)
        }
        entries.append(LogEntry(sequence: sequence, timestamp: timestamp, operation: operation))
    }
    return entries
}

// MARK: - Mode 0: hostile bytes

private func checkOffset(_ error: BinaryDecodingError, size: Int) {
    precondition(
        error.offset >= 0 && error.offset <= size, "decoding error offset \(error.offset) outside \(size) bytes")
}

private func encoded(_ encode: (inout BinaryWriter) -> Void) -> [UInt8] {
    var writer = BinaryWriter()
    encode(&writer)
    return writer.bytes
}

/// Decodes `bytes` with `decode`, checking the error offset; `nil` on error.
private func decoding<Value>(_ bytes: [UInt8], _ decode: (UnsafeRawBufferPointer) throws(BinaryDecodingError) -> Value)
    -> Value?
{
    let result: Result<Value, BinaryDecodingError> = bytes.withUnsafeBytes { raw in
        do throws(BinaryDecodingError) { return .success(try decode(raw)) } catch { return .failure(error) }
    }
    switch result {
    case .success(let value): return value
    case .failure(let error):
        checkOffset(error, size: bytes.count)
        return nil
    }
}

private func decodeNode(_ raw: UnsafeRawBufferPointer) throws(BinaryDecodingError) -> Node {
    var reader = BinaryReader(bytes: raw)
    let node = try NodeCodec.decodeNode(from: &reader)
    guard reader.isAtEnd else { throw reader.failure("trailing bytes") }
    return node
}

/// Snapshot framing around hostile content: magic, `header` as a framed record, `sections` checksummed.
private func framedSnapshot(magic: [UInt8], header: ArraySlice<UInt8>, sections: [ArraySlice<UInt8>]) -> [UInt8] {
    var bytes = magic
    if !header.isEmpty { RecordFraming.append(payload: Array(header), to: &bytes) }
    for section in sections {
        var writer = BinaryWriter()
        writer.writeUInt64(UInt64(section.count))
        let checksum = section.withUnsafeBytes { CRC32C.checksum($0) }
        for shift in stride(from: 0, to: 32, by: 8) {
            writer.write(UInt8(truncatingIfNeeded: checksum >> UInt32(shift)))
        }
        bytes += writer.bytes + section
    }
    return bytes
}

/// Reading a snapshot file either works or throws a corrupt-snapshot error naming it.
private func checkSnapshotRead<Contents>(
    _ path: String, _ read: (String) throws(JournalError) -> Contents
) -> Contents? {
    do {
        return try read(path)
    } catch {
        guard case .corruptSnapshot(let file, _) = error, file == path else {
            preconditionFailure("a damaged snapshot gave \(error)")
        }
        return nil
    }
}

private func hostileBytes(_ body: [UInt8]) {
    if let node = decoding(body, decodeNode) {
        let again = decoding(encoded { NodeCodec.encode(node, into: &$0) }, decodeNode)
        precondition(again == node, "a decoded node re-encodes different")
    }
    if let entry = decoding(body, LogEntryCodec.decode) {
        let again = decoding(encoded { LogEntryCodec.encode(entry, into: &$0) }, LogEntryCodec.decode)
        precondition(again == entry, "a decoded log entry re-encodes different")
    }
    do {
        let proposal = try ProposalCodec.decode(body)
        precondition(
            (try? ProposalCodec.decode(ProposalCodec.encode(proposal))) == proposal, "a proposal re-encodes different")
    } catch {
        checkOffset(error, size: body.count)
    }
    var replica = ReplicaSnapshotCodec.magic + body
    let checksum = CRC32C.checksum(replica)
    for shift in stride(from: 0, to: 32, by: 8) { replica.append(UInt8(truncatingIfNeeded: checksum >> UInt32(shift))) }
    if let snapshot = decodingReplica(replica) {
        let bytes = ReplicaSnapshotCodec.encode(snapshot)
        guard let again = decodingReplica(bytes) else {
            preconditionFailure("a re-encoded replica snapshot is refused")
        }
        precondition(ReplicaSnapshotCodec.encode(again) == bytes, "a replica snapshot re-encodes different")
    }

    var source = ByteSource(remaining: body[...])
    let header = source.take(source.below(body.count + 1))
    let tree = source.remaining
    let statePath = workDirectory + "/hostile.canopy"
    writeFile(statePath, framedSnapshot(magic: StateSnapshotFile.magic, header: header, sections: [tree]))
    if let contents = checkSnapshotRead(statePath, StateSnapshotFile.read) {
        precondition(contents.timestamp.isFinite, "a snapshot read with a non-finite time")
    }
}

private func decodingReplica(_ bytes: [UInt8]) -> ReplicaSnapshot? {
    do {
        return try ReplicaSnapshotCodec.decode(bytes)
    } catch {
        checkOffset(error, size: bytes.count)
        return nil
    }
}

// MARK: - Damage

/// A truncation or a single flipped bit.
private enum Damage {
    case truncate(at: Int)
    case flip(bit: Int)

    init(_ source: inout ByteSource, size: Int) {
        self = source.next() & 1 == 0 ? .truncate(at: source.below(size)) : .flip(bit: source.below(size * 8))
    }

    /// The byte where the damage starts.
    var offset: Int {
        switch self {
        case .truncate(let offset): return offset
        case .flip(let bit): return bit / 8
        }
    }

    func applied(to bytes: [UInt8]) -> [UInt8] {
        switch self {
        case .truncate(let offset): return Array(bytes[..<offset])
        case .flip(let bit):
            var damaged = bytes
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            return damaged
        }
    }
}

// MARK: - Mode 1: damaged journals

/// One journal record as written: its segment, where it starts and ends there.
private struct WrittenRecord {
    let segment: Int
    let range: Range<Int>
}

private func damagedJournal(_ source: inout ByteSource) {
    let entries = makeEntries(&source)
    guard !entries.isEmpty else { return }
    var state = LogState(compiler: nil)
    var trees = [state.root]
    for entry in entries {
        _ = state.apply(entry, isReplay: true)
        trees.append(state.root)
    }

    // Consecutive entries per segment, 1–3 segments.
    let segmentCount = min(entries.count, 1 + Int(source.next() % 3))
    var segments: [[UInt8]] = Array(repeating: [], count: segmentCount)
    var firstSequences: [UInt64] = []
    var records: [WrittenRecord] = []
    for (index, entry) in entries.enumerated() {
        let segment = index * segmentCount / entries.count
        if firstSequences.count == segment { firstSequences.append(entry.sequence) }
        var writer = BinaryWriter()
        RecordFraming.append(to: &writer) { LogEntryCodec.encode(entry, into: &$0) }
        let start = segments[segment].count
        records.append(WrittenRecord(segment: segment, range: start..<(start + writer.bytes.count)))
        segments[segment] += writer.bytes
    }

    let damagedSegment = Int(source.next()) % segmentCount
    let damage = Damage(&source, size: segments[damagedSegment].count)
    for name in (try? FileSystem.listDirectory(namespace.logDirectory)) ?? [] {
        unlink(namespace.logDirectory + "/" + name)
    }
    var paths: [String] = []
    for (index, bytes) in segments.enumerated() {
        let path = JournalSegment(directory: namespace.logDirectory, firstSequence: firstSequences[index]).path
        paths.append(path)
        writeFile(path, index == damagedSegment ? damage.applied(to: bytes) : bytes)
    }

    // The first record the damage reaches (in log order), and whether it is the torn tail of the last segment.
    let lost =
        records.firstIndex { $0.segment == damagedSegment && $0.range.upperBound > damage.offset } ?? records.count
    let isLastSegment = damagedSegment == segmentCount - 1
    let lostStart = lost < records.count ? records[lost].range.lowerBound : 0
    for repair in [false, true] {
        do {
            let loaded = try LogLoader.load(namespace, compiler: nil, repair: repair, readOnly: true)
            let kept = Int(loaded.state.sequence)
            precondition(loaded.state.root == trees[kept], "a damaged journal loaded a tree that no prefix of it gives")
            precondition(kept == lost, "a damaged journal loaded \(kept) entries where \(lost) precede the damage")
        } catch {
            switch error {
            case .corrupt(let file, let offset):
                precondition(!repair, "repair refused a damaged journal")
                precondition(
                    file == paths[damagedSegment] && offset == lostStart, "corruption reported at the wrong place")
            case .undecodableRecord(let file, _, _):
                precondition(
                    file == paths[min(damagedSegment + 1, segmentCount - 1)], "a gap reported in the wrong file")
                precondition(!isLastSegment, "a gap reported after damage to the last segment")
            default:
                preconditionFailure("a damaged journal gave \(error)")
            }
            if case .truncate = damage, isLastSegment {
                preconditionFailure("a torn final write was refused: \(error)")
            }
        }
    }
}

// MARK: - Mode 2: damaged snapshots

private func damagedSnapshots(_ source: inout ByteSource) {
    let root = makeNode(&source, levels: 4)
    let rules =
        source.next() & 1 == 0 ? RulesRevision.initial : RulesRevision(version: 3, source: Array(source.take(8)))
    let contents = StateSnapshotFile.Contents(
        root: root, sequence: UInt64(source.next()), timestamp: 12.5, rules: rules)
    let path = workDirectory + "/state.canopy"
    let damagedPath = workDirectory + "/damaged.canopy"
    do {
        try StateSnapshotFile.write(contents, to: path)
        let again = try StateSnapshotFile.read(path)
        precondition(
            again.root == root && again.sequence == contents.sequence && again.timestamp == contents.timestamp
                && again.rules == rules, "a snapshot reads back different")
        let bytes = try FileSystem.readFile(path)
        writeFile(damagedPath, Damage(&source, size: bytes.count).applied(to: bytes))
        precondition(checkSnapshotRead(damagedPath, StateSnapshotFile.read) == nil, "a damaged snapshot was accepted")
    } catch {
        preconditionFailure("writing or reading an intact snapshot failed: \(error)")
    }

    var presence = ClusterPresence()
    presence.lastHeard = ["node-a": 1.5, "node-b": Double(source.next())]
    let replica = ReplicaSnapshot(
        position: UInt64(source.next()), root: root, sequence: contents.sequence, timestamp: 7, rules: rules,
        presence: presence, nodeOrder: NodeOrder(next: ["node-a": 4], held: []), undecodable: Int(source.next()))
    let bytes = ReplicaSnapshotCodec.encode(replica)
    guard let decoded = try? ReplicaSnapshotCodec.decode(bytes) else {
        preconditionFailure("a replica snapshot is refused")
    }
    precondition(
        decoded.root == root && ReplicaSnapshotCodec.encode(decoded) == bytes,
        "a replica snapshot reads back different")
    precondition(
        (try? ReplicaSnapshotCodec.decode(Damage(&source, size: bytes.count).applied(to: bytes))) == nil,
        "a damaged replica snapshot was accepted")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func storeLoaderFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    var source = ByteSource(remaining: body[...])
    switch data[0] % 3 {
    case 0: hostileBytes(body)
    case 1: damagedJournal(&source)
    default: damagedSnapshots(&source)
    }
    return 0
}
