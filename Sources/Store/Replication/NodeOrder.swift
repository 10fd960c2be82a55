/// Applies each node's proposals in the order the node made them, whatever order the log stored them in.
///
/// A node keeps many appends in flight and publishes again one that was not acknowledged in time; across a leader
/// election the log can then store proposal 70 before 69. Applying them in log order would reorder one connection's
/// writes. Every replica instead holds a proposal until the node's earlier ones are applied, and ignores a number
/// already applied (a duplicate the log's de-duplication window missed). The decision depends only on the log's
/// content, so every replica holds and releases alike.
struct NodeOrder: Equatable {
    /// The next proposal number expected from each node (`.max` for a node declared down).
    private(set) var next: [String: UInt64] = [:]
    /// Proposals that arrived before their predecessors, by node and number.
    private(set) var held: [String: [UInt64: Proposal]] = [:]

    init() {}

    /// The order as a replica snapshot recorded it.
    init(next: [String: UInt64], held: [Proposal]) {
        self.next = next
        for proposal in held { self.held[proposal.node, default: [:]][proposal.number] = proposal }
    }

    /// Every held proposal, in a fixed order (by node, then number), for a snapshot.
    var heldProposals: [Proposal] {
        held.keys.sorted().flatMap { node in
            (held[node] ?? [:]).keys.sorted().compactMap { held[node]?[$0] }
        }
    }

    /// Takes a proposal from the log; returns those now ready, in order (none when it must wait or is a duplicate).
    mutating func admit(_ proposal: Proposal) -> [Proposal] {
        let expected = next[proposal.node] ?? 1
        guard proposal.number >= expected else { return [] }
        guard proposal.number == expected else {
            held[proposal.node, default: [:]][proposal.number] = proposal
            return []
        }
        var ready = [proposal]
        var following = expected + 1
        while let waiting = held[proposal.node]?.removeValue(forKey: following) {
            ready.append(waiting)
            following += 1
        }
        if held[proposal.node]?.isEmpty == true { held[proposal.node] = nil }
        next[proposal.node] = following
        return ready
    }

    /// Whether `node` was declared down (its proposals are ignored from then on).
    func isForgotten(_ node: String) -> Bool {
        next[node] == .max
    }

    /// Drops a node declared down, with whatever of its proposals was waiting.
    mutating func forget(_ node: String) {
        held[node] = nil
        next[node] = .max
    }
}
