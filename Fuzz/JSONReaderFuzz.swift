// libFuzzer entry for the JSON reader (Sources/DataModel/JSON); built by `scripts/fuzz JSONReaderFuzz`, which compiles
// this file together with Sources/Primitives and Sources/DataModel as one module (so there is no `import DataModel`).
//
// Every input is read three ways: as a generic value, as Firebase data and as a multi-path update document, with
// small limits so each is reachable. Errors must point inside the input; whatever reads successfully must re-encode
// with JSONWriter and read back equal (and re-encode to the same bytes). Any crash, sanitizer report or broken
// invariant (reported by trapping) is a finding.

/// Data limits small enough for short inputs to cross them.
private let fuzzLimits = DataLimits(maxDepth: 6, maxKeyBytes: 16, maxStringBytes: 64)
/// Nesting limit for generic values.
private let fuzzMaxNesting = 12
/// Input size limit (libFuzzer's inputs go up to 4096 bytes).
private let fuzzMaxBytes = 2048

/// Traps unless `error` points inside an input of `size` bytes.
private func checkOffset(_ error: JSONError, size: Int, _ what: String) {
    precondition(
        error.offset >= 0 && error.offset <= size, "\(what) error offset \(error.offset) outside \(size) bytes")
}

/// The compact encoding of a generic value.
private func encoded(_ value: JSONValue) -> [UInt8] {
    var writer = JSONWriter()
    writer.write(value)
    return writer.bytes
}

/// The export-format encoding of a node.
private func exported(_ node: Node) -> [UInt8] {
    var writer = JSONWriter()
    writer.writeExport(node)
    return writer.bytes
}

/// How many key levels `node` has below it.
private func levels(_ node: Node) -> Int {
    node.children.reduce(0) { max($0, 1 + levels($1.node)) }
}

/// Generic values: a re-encoding reads back equal and is canonical; an object's members split by `readMembers`
/// read as the same values.
private func checkValue(_ input: UnsafeRawBufferPointer) {
    let value: JSONValue
    do {
        value = try JSONReader.readValue(input, maxNesting: fuzzMaxNesting, maxBytes: fuzzMaxBytes)
    } catch {
        checkOffset(error, size: input.count, "readValue")
        return
    }
    let bytes = encoded(value)
    guard let again = try? JSONReader.readValue(bytes, maxNesting: fuzzMaxNesting) else {
        preconditionFailure("the re-encoded value does not read back")
    }
    precondition(again == value, "the re-encoded value reads back different")
    precondition(encoded(again) == bytes, "re-encoding is not canonical")

    guard case .object(let members) = value else { return }
    let split: [(key: String, keyOffset: Int, range: Range<Int>)]
    do {
        split = try JSONReader.readMembers(input, maxNesting: fuzzMaxNesting, maxBytes: fuzzMaxBytes)
    } catch {
        preconditionFailure("readMembers refuses an object readValue accepts: \(error)")
    }
    precondition(split.count == members.count, "readMembers and readValue disagree on the member count")
    for (part, member) in zip(split, members) {
        precondition(CodeUnitOrder.equal(part.key, member.key), "readMembers and readValue disagree on a key")
        precondition(input[part.keyOffset] == UInt8(ascii: "\""), "a key offset is not at its opening quote")
        let slice = UnsafeRawBufferPointer(rebasing: input[part.range])
        precondition(
            (try? JSONReader.readValue(slice, maxNesting: fuzzMaxNesting)) == member.value,
            "a member's range does not hold its value")
    }
}

/// Firebase data: it is JSON, respects the depth limit, and (without server values) its export reads back equal.
private func checkData(_ input: UnsafeRawBufferPointer, depth: Int) {
    let value: WriteValue
    do {
        value = try JSONReader.readData(input, depth: depth, limits: fuzzLimits, maxBytes: fuzzMaxBytes)
    } catch {
        checkOffset(error, size: input.count, "readData")
        return
    }
    precondition(
        (try? JSONReader.readValue(input, maxNesting: JSONReader.defaultMaxNesting)) != nil,
        "readData accepts what readValue refuses")
    precondition(depth + levels(value.node) <= fuzzLimits.maxDepth, "data deeper than the limit was accepted")
    guard value.serverValues.isEmpty else { return }
    let export = exported(value.node)
    let again: WriteValue
    do {
        again = try JSONReader.readData(export, depth: depth, limits: fuzzLimits)
    } catch {
        preconditionFailure("the exported data does not read back: \(error)")
    }
    precondition(again.node == value.node && again.serverValues.isEmpty, "the exported data reads back different")
    precondition(exported(again.node) == export, "export is not canonical")
    var plain = JSONWriter()
    plain.writePlain(value.node)
    precondition((try? JSONReader.readValue(plain.bytes)) != nil, "plain output is not JSON")
}

/// Update documents: entries re-encoded as an update object read back equal.
private func checkUpdate(_ input: UnsafeRawBufferPointer, depth: Int) {
    let entries: [UpdateEntry]
    do {
        entries = try JSONReader.readUpdate(input, depth: depth, limits: fuzzLimits, maxBytes: fuzzMaxBytes)
    } catch {
        checkOffset(error, size: input.count, "readUpdate")
        return
    }
    guard entries.allSatisfy({ $0.value.serverValues.isEmpty }) else { return }
    var writer = JSONWriter()
    writer.writeRaw("{".utf8)
    for (index, entry) in entries.enumerated() {
        if index > 0 { writer.writeRaw(",".utf8) }
        switch entry.target {
        case .node(let path): writer.writeString(path.description)
        case .priority(of: let path): writer.writeString(path.description + "/" + WriteTarget.prioritySegment)
        }
        writer.writeRaw(":".utf8)
        writer.writeExport(entry.value.node)
    }
    writer.writeRaw("}".utf8)
    let again: [UpdateEntry]
    do {
        again = try JSONReader.readUpdate(writer.bytes, depth: depth, limits: fuzzLimits)
    } catch {
        preconditionFailure("the re-encoded update does not read back: \(error)")
    }
    precondition(again == entries, "the re-encoded update reads back different")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonReaderFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    // The write path's depth comes from the size, so seeds stay plain JSON and every depth gets exercised.
    let depth = size % (fuzzLimits.maxDepth + 1)
    checkValue(input)
    checkData(input, depth: depth)
    checkUpdate(input, depth: depth)
    return 0
}
