import DataModel

/// Receives the keys of a path argument one by one (see ``EvaluationContext/forEachKey(_:method:source:into:)``).
///
/// A protocol rather than a closure: a closure would capture (copy) the whole evaluation context, which costs
/// more than the walk it drives.
protocol PathKeySink {
    /// Takes the next key; `context` is the evaluation the keys belong to.
    mutating func take(_ key: Key, in context: EvaluationContext)
}

/// Collects the keys into an array.
private struct KeyCollector: PathKeySink {
    var keys: [Key] = []

    mutating func take(_ key: Key, in context: EvaluationContext) {
        keys.append(key)
    }
}

/// Walks from a node to the descendant at the keys; the last key is kept for ``NodeReference/exists``.
private struct NodeWalker: PathKeySink {
    var reference: NodeReference

    mutating func take(_ key: Key, in context: EvaluationContext) {
        reference.step(key)
    }
}

/// Walks a ``NodeReference``: while the keys repeat the evaluation path where the reference is on it, only its
/// depth moves on; the node is taken from the context's levels when the walk leaves the path or ends.
private struct ReferenceWalker: PathKeySink {
    var reference: NodeReference
    /// Whether `reference.pathDepth` moved on along the path, leaving `reference.node` behind.
    var advanced = false

    mutating func take(_ key: Key, in context: EvaluationContext) {
        if let level = reference.pathDepth {
            if level < context.depth && key == context.key(at: level) {
                reference.pathDepth = level + 1
                advanced = true
                return
            }
            if advanced { reference.node = context.ancestor(level, isNew: reference.isNew) }
            reference.pathDepth = nil
        }
        reference.step(key)
    }

    /// The reference after the last key.
    mutating func finish(in context: EvaluationContext) -> NodeReference {
        if advanced, let level = reference.pathDepth { reference.node = context.ancestor(level, isNew: reference.isNew) }
        return reference
    }
}

extension EvaluationContext {
    /// The keys of a path argument: literal ones as compiled, computed ones split at `/` (empty segments, so
    /// leading and trailing slashes, are ignored).
    func keys(_ argument: CompiledExpression.PathArgument, method: String, source: SourceRange)
        throws(EvaluationError) -> ArraySlice<Key>
    {
        if case .keys(let keys) = argument { return keys[...] }
        var collector = KeyCollector()
        try forEachKey(argument, method: method, source: source, into: &collector)
        return collector.keys[...]
    }

    /// Follows `argument`'s keys from `reference`. While they repeat the evaluation path where `reference` is on
    /// it, the nodes are the context's own levels; only the rest is looked up.
    func walk(_ reference: NodeReference, _ argument: CompiledExpression.PathArgument, method: String, source: SourceRange)
        throws(EvaluationError) -> NodeReference
    {
        var walker = ReferenceWalker(reference: reference)
        try forEachKey(argument, method: method, source: source, into: &walker)
        return walker.finish(in: self)
    }

    /// Whether `node` has a descendant at `argument`'s keys (itself, when there are none).
    func hasDescendant(_ node: Node, _ argument: CompiledExpression.PathArgument, method: String, source: SourceRange)
        throws(EvaluationError) -> Bool
    {
        if case .keys(let keys) = argument, let last = keys.last {
            // A literal path (`hasChildren(['name'])`): no walker needed.
            var current = node
            for index in 0..<(keys.count - 1) { current = current.child(keys[index]) }
            return current.hasChild(last)
        }
        var walker = NodeWalker(reference: NodeReference(offPath: node))
        try forEachKey(argument, method: method, source: source, into: &walker)
        return walker.reference.exists
    }

    /// Passes each key of a path argument to `sink`, in order, without collecting them. Every part of the
    /// argument is evaluated (so its errors are raised) even when the location no longer exists.
    func forEachKey<Sink: PathKeySink>(
        _ argument: CompiledExpression.PathArgument, method: String, source: SourceRange, into sink: inout Sink
    ) throws(EvaluationError) {
        switch argument {
        case .keys(let keys):
            for key in keys { sink.take(key, in: self) }
        case .computed(let expression):
            let value = try evaluate(expression)
            guard case .string(let text) = value else {
                throw EvaluationError(.argumentNotAString(method: method, found: value.typeName), source)
            }
            forEachPathKey(text, into: &sink)
        case .template(let pieces):
            var builder = PathBuilder()
            for index in pieces.indices {
                switch pieces[index] {
                case .text(let text):
                    builder.append(text.head, key: text.headKey)
                    if text.hasSlash {
                        builder.endSegment(into: &sink, in: self)
                        for key in text.inner { sink.take(key, in: self) }
                        builder.append(text.tail, key: text.tailKey)
                    }
                case .capture(let depth):
                    builder.append(key(at: depth))
                case .value(let expression, let plusSource):
                    let value = try evaluate(expression)
                    switch value {
                    case .string(let text): builder.appendSplitting(text, into: &sink, in: self)
                    case .number(let number): builder.append(Self.format(number))
                    default:
                        throw EvaluationError(
                            .arithmeticTypes(operator: "+", left: "a string", right: value.typeName), plusSource)
                    }
                }
            }
            builder.endSegment(into: &sink, in: self)
        }
    }

    /// Splits a rules path at `/` into keys, dropping empty segments.
    ///
    /// A segment that is not a valid key (`bob@example.com` has a `.`) is kept as it is: no stored key can equal
    /// it, so the location simply does not exist — Firebase evaluates `root.child('banned/' + auth.uid)` with such a
    /// uid without error (security-rules.md §14 live facts), and `parent()` still walks back through it.
    static func pathKeys(_ text: String) -> [Key] {
        guard containsSlash(text) else { return text.isEmpty ? [] : [Key(trusted: text)] }
        return text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map {
            Key(trusted: String(decoding: $0, as: UTF8.self))
        }
    }

    /// Passes each key of a rules path (see ``pathKeys(_:)``) to `sink`.
    private func forEachPathKey<Sink: PathKeySink>(_ text: String, into sink: inout Sink) {
        // The common case — a uid, a wildcard's key — is one segment.
        guard Self.containsSlash(text) else {
            if !text.isEmpty { sink.take(Key(trusted: text), in: self) }
            return
        }
        for part in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            sink.take(Key(trusted: String(decoding: part, as: UTF8.self)), in: self)
        }
    }

    /// Whether `text` contains a `/`.
    static func containsSlash(_ text: String) -> Bool {
        let slash = UInt8(ascii: "/")
        if let found = text.utf8.withContiguousStorageIfAvailable({ bytes in bytes.contains(slash) }) { return found }
        return text.utf8.contains(slash)
    }
}

/// Assembles the keys of a path template: text accumulates into the current segment, `/` ends it.
private struct PathBuilder {
    /// The segment being built.
    private var segment = ""
    /// The segment as a key while it is exactly one key appended whole (a `$wildcard`), saving a copy.
    private var segmentKey: Key?

    /// Appends text that contains no `/`.
    mutating func append(_ text: String) {
        guard !text.isEmpty else { return }
        if segment.isEmpty && segmentKey == nil {
            // Most often the whole segment (a uid): keep it as a key, concatenate only if more follows.
            segmentKey = Key(trusted: text)
            return
        }
        materialize()
        segment += text
    }

    /// Appends text without `/` whose key form is known: it becomes the segment's key if the segment is empty.
    mutating func append(_ text: String, key: Key?) {
        guard let key else { return }
        if segment.isEmpty && segmentKey == nil {
            segmentKey = key
        } else {
            append(text)
        }
    }

    /// Appends a whole key.
    mutating func append(_ key: Key) {
        if segment.isEmpty && segmentKey == nil {
            segmentKey = key
        } else {
            materialize()
            segment += key.string
        }
    }

    /// Appends text that may contain `/`; completed segments go to `sink`.
    mutating func appendSplitting<Sink: PathKeySink>(_ text: String, into sink: inout Sink, in context: EvaluationContext) {
        guard EvaluationContext.containsSlash(text) else {
            append(text)
            return
        }
        var first = true
        for part in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if !first { endSegment(into: &sink, in: context) }
            first = false
            append(String(decoding: part, as: UTF8.self))
        }
    }

    /// Ends the current segment, passing it to `sink`; empty segments (from `//` or leading and trailing slashes)
    /// vanish.
    mutating func endSegment<Sink: PathKeySink>(into sink: inout Sink, in context: EvaluationContext) {
        if let key = segmentKey {
            sink.take(key, in: context)
        } else if !segment.isEmpty {
            sink.take(Key(trusted: segment), in: context)
        }
        segment = ""
        segmentKey = nil
    }

    /// Turns a pending whole key into text so more can be appended to the segment.
    private mutating func materialize() {
        guard let key = segmentKey else { return }
        segment = key.string
        segmentKey = nil
    }
}
