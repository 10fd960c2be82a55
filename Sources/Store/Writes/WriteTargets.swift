import DataModel

/// A write broken down into absolute targets, in apply order.
struct WriteTargets: Sendable {
    /// One absolute target and its value.
    struct Entry: Sendable {
        let target: WriteTarget
        let value: WriteValue

        /// The node the target writes or whose priority it sets.
        var path: Path { target.path }
    }

    /// The targets in apply order.
    let entries: [Entry]
    /// The compare-and-set hash (sets only).
    let expectedHash: String?

    /// The targets of `write`; a push's new child is named `pushKey`.
    init(_ write: StoreWrite, pushKey: @autoclosure () -> Key) {
        switch write {
        case .push(let parent, let value):
            entries = [Entry(target: .node(parent.child(pushKey())), value: value)]
            expectedHash = nil
        case .set(let target, let value, let expectedHash):
            entries = [Entry(target: target, value: value)]
            self.expectedHash = expectedHash
        case .update(let base, let updates):
            entries = updates.map { update in
                switch update.target {
                case .node(let relative):
                    return Entry(target: .node(base.appending(relative)), value: update.value)
                case .priority(of: let relative):
                    return Entry(target: .priority(of: base.appending(relative)), value: update.value)
                }
            }
            expectedHash = nil
        }
    }
}

extension WriteTarget {
    /// The node the target writes or whose priority it sets.
    var path: Path {
        switch self {
        case .node(let path), .priority(of: let path): return path
        }
    }
}

extension WriteTargets.Entry {
    /// The value to store, server values resolved against `current` (the data before the write, by absolute
    /// path). For a priority target the result is the priority (`nil` to remove it).
    func resolve(timestamp: Double, current: (Path) -> Node) throws(StoreError) -> ResolvedValue {
        let base = path
        switch target {
        case .node:
            do throws(ValueError) {
                return .node(try value.resolved(timestamp: timestamp) { current(base.appending($0)) })
            } catch {
                throw .serverValue(error)
            }
        case .priority:
            let node: Node
            do throws(ValueError) {
                node = try value.resolved(timestamp: timestamp) { _ in
                    switch current(base).priority {
                    case .number(let number)?: return Node(.number(number))
                    case .string(let text)?: return Node(.string(text))
                    case nil: return .empty
                    }
                }
            } catch {
                throw .serverValue(error)
            }
            switch node.leafValue {
            case .number(let number)?: return .priority(.number(number))
            case .string(let text)?: return .priority(.string(text))
            case .bool?: throw .invalidPriority
            case nil:
                guard node.isEmpty else { throw .invalidPriority }
                return .priority(nil)
            }
        }
    }
}

/// A target's value after server values were resolved.
enum ResolvedValue {
    /// The node to set.
    case node(Node)
    /// The priority to set (`nil` removes it).
    case priority(Priority?)
}
