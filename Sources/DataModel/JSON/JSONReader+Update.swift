/// One location of a multi-path update (wire `m`, REST `PATCH`): a target relative to the update's path and the
/// value to write there.
public struct UpdateEntry: Sendable, Equatable {
    /// The relative location, or the priority of one.
    public var target: WriteTarget
    /// The value; for a priority target a leaf number or string, empty (no priority), or a root server value.
    public var value: WriteValue

    /// Creates an entry.
    public init(target: WriteTarget, value: WriteValue) {
        self.target = target
        self.value = value
    }
}

extension JSONReader {
    /// Parses a multi-path update: an object whose keys are relative paths (`"members/carol"`, possibly ending in
    /// `/.priority`) and whose values are data (wire-protocol.md §6.8).
    ///
    /// - Parameters:
    ///   - bytes: the update object as UTF-8 JSON.
    ///   - depth: depth of the update's path; each entry is read at `depth` plus its relative depth.
    /// - Returns: the entries in input order. No two overlap (one path an ancestor of another, or the same path
    ///   twice), which the SDKs also refuse to send.
    /// - Throws: ``JSONError``; a bad path as ``JSONError/Reason/invalidData(_:)`` at the offset of its member's key,
    ///   overlaps and bad values at the offset of the offending member's value.
    public static func readUpdate(
        _ bytes: UnsafeRawBufferPointer, depth: Int = 0, limits: DataLimits = .default, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> [UpdateEntry] {
        let members = try readMembers(bytes, maxNesting: Swift.max(defaultMaxNesting, limits.maxDepth * 2), maxBytes: maxBytes)
        var entries: [UpdateEntry] = []
        var offsets: [Int] = []
        for member in members {
            let offset = member.range.lowerBound
            let target: WriteTarget
            do {
                target = try WriteTarget(parsing: member.key, limits: limits)
            } catch {
                throw JSONError(offset: member.keyOffset, reason: .invalidData(.invalidKey(error)))
            }
            let relative: Path
            switch target {
            case .node(let path), .priority(of: let path): relative = path
            }
            let targetDepth = depth + relative.depth
            guard targetDepth <= limits.maxDepth else {
                throw JSONError(offset: offset, reason: .invalidData(.tooDeep(depth: targetDepth)))
            }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[member.range])
            var value: WriteValue
            do {
                value = try readData(slice, depth: targetDepth, limits: limits, maxBytes: maxBytes)
            } catch {
                throw JSONError(offset: offset + error.offset, reason: error.reason)
            }
            if case .priority = target, !isPriorityValue(value) {
                throw JSONError(offset: offset, reason: .invalidData(.invalidPriority))
            }
            entries.append(UpdateEntry(target: target, value: value))
            offsets.append(offset)
        }
        if let (first, second) = firstOverlap(entries.map(\.target)) {
            throw JSONError(
                offset: offsets[second],
                reason: .invalidData(.overlappingUpdatePaths(members[first].key, members[second].key)))
        }
        return entries
    }

    /// Parses a multi-path update from an array of bytes (see ``readUpdate(_:depth:limits:maxBytes:)``).
    public static func readUpdate(
        _ bytes: [UInt8], depth: Int = 0, limits: DataLimits = .default, maxBytes: Int = defaultMaxBytes
    ) throws(JSONError) -> [UpdateEntry] {
        try withRawBytes(bytes) { raw throws(JSONError) in
            try readUpdate(raw, depth: depth, limits: limits, maxBytes: maxBytes)
        }
    }

    /// Whether a value can be written as a priority: nothing, a plain number or string, or a server value.
    private static func isPriorityValue(_ value: WriteValue) -> Bool {
        if value.node.isEmpty { return true }
        if value.serverValues.count == 1, let only = value.serverValues.first, only.path.isRoot, !only.isPriority {
            return true
        }
        guard value.serverValues.isEmpty, value.node.priority == nil else { return false }
        switch value.node.storage {
        case .number, .string: return true
        default: return false
        }
    }

    /// Indices (in input order) of two targets that overlap, if any: a node target contains every target at or below
    /// its path (including the priority of its own path). Sorting by path puts a container right before the first
    /// thing it contains, so checking neighbours suffices.
    static func firstOverlap(_ targets: [WriteTarget]) -> (Int, Int)? {
        func parts(_ target: WriteTarget) -> (path: Path, isPriority: Bool) {
            switch target {
            case .node(let path): return (path, false)
            case .priority(of: let path): return (path, true)
            }
        }
        let order = targets.indices.sorted { left, right in
            let (a, b) = (parts(targets[left]), parts(targets[right]))
            if a.path != b.path { return a.path < b.path }
            return !a.isPriority && b.isPriority
        }
        for (left, right) in zip(order, order.dropFirst()) {
            let (a, b) = (parts(targets[left]), parts(targets[right]))
            let overlaps = a.path == b.path || (!a.isPriority && a.path.contains(b.path))
            if overlaps { return (Swift.min(left, right), Swift.max(left, right)) }
        }
        return nil
    }
}
