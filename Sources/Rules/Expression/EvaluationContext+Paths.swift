import DataModel

extension EvaluationContext {
    /// The keys of a path argument: literal ones as compiled, computed ones split at `/` (empty segments, so
    /// leading and trailing slashes, are ignored).
    func keys(_ argument: CompiledExpression.PathArgument, method: String, source: SourceRange)
        throws(EvaluationError) -> ArraySlice<Key>
    {
        switch argument {
        case .keys(let keys):
            return keys[...]
        case .computed(let expression):
            let value = try evaluate(expression)
            guard case .string(let text) = value else {
                throw EvaluationError(.argumentNotAString(method: method, found: value.typeName), source)
            }
            return Self.pathKeys(text)[...]
        case .template(let pieces):
            var builder = PathBuilder()
            for piece in pieces {
                switch piece {
                case .text(let text):
                    builder.append(text.head, key: text.headKey)
                    if text.hasSlash {
                        builder.endSegment()
                        builder.keys.append(contentsOf: text.inner)
                        builder.append(text.tail, key: text.tailKey)
                    }
                case .capture(let depth):
                    builder.append(path[depth])
                case .value(let expression, let plusSource):
                    let value = try evaluate(expression)
                    switch value {
                    case .string(let text): builder.appendSplitting(text)
                    case .number(let number): builder.append(Self.format(number))
                    default:
                        throw EvaluationError(
                            .arithmeticTypes(operator: "+", left: "a string", right: value.typeName), plusSource)
                    }
                }
            }
            builder.endSegment()
            return builder.keys[...]
        }
    }

    /// Splits a rules path at `/` into keys, dropping empty segments.
    ///
    /// A segment that is not a valid key (`bob@example.com` has a `.`) is kept as it is: no stored key can equal
    /// it, so the location simply does not exist — Firebase evaluates `root.child('banned/' + auth.uid)` with such a
    /// uid without error (security-rules.md §14 live facts), and `parent()` still walks back through it.
    static func pathKeys(_ text: String) -> [Key] {
        // The common case — a uid, a wildcard's key — is one segment.
        if !text.utf8.contains(UInt8(ascii: "/")) { return text.isEmpty ? [] : [Key(trusted: text)] }
        return text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map {
            Key(trusted: String(decoding: $0, as: UTF8.self))
        }
    }
}

/// Assembles the keys of a path template: text accumulates into the current segment, `/` ends it.
private struct PathBuilder {
    var keys: [Key] = []

    init() {
        keys.reserveCapacity(8)
    }

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

    /// Appends text that may contain `/`.
    mutating func appendSplitting(_ text: String) {
        guard text.utf8.contains(UInt8(ascii: "/")) else {
            append(text)
            return
        }
        var first = true
        for part in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if !first { endSegment() }
            first = false
            append(String(decoding: part, as: UTF8.self))
        }
    }

    /// Ends the current segment; empty segments (from `//` or leading and trailing slashes) vanish.
    mutating func endSegment() {
        if let key = segmentKey {
            keys.append(key)
        } else if !segment.isEmpty {
            keys.append(Key(trusted: segment))
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
