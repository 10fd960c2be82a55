/// What a namespace's log tells the operator about its following (the executable logs each one).
public enum FollowingEvent: Sendable, Equatable {
    /// The stream's leader holds another entry than the replica applied at `position`: it is asked to step down
    /// (`stepDown` is nats.c's answer to that request), and following waits for another leader.
    case leaderContradicts(namespace: String, leader: String, position: UInt64, stepDown: String)
    /// The stream's leader does not hold the entry replica `peer` announced it applied at `position`, ahead of this
    /// replica (``PeerMarks``): it is asked to step down, and following waits for another leader.
    case leaderContradictsPeer(namespace: String, leader: String, peer: String, position: UInt64, stepDown: String)
    /// The replica's rebuild from `leader`'s copy was outvoted by the other replicas' checkpoints: nothing passes
    /// from that copy while it leads, and it was asked to step down (`stepDown`: nats.c's answer).
    case sourceDistrusted(namespace: String, leader: String, stepDown: String)
    /// A second, different leader contradicted the replica too: the replica rebuilds from the log.
    case diverged(namespace: String, position: UInt64)
    /// Nothing passed for `seconds` while the stream holds more than the replica applied. Repeated while it lasts.
    case stalled(namespace: String, seconds: Int, delivered: UInt64, knownHead: UInt64, halted: Bool, attempts: Int)
    /// Following passes entries again after a stall was reported.
    case resumed(namespace: String, position: UInt64)
    /// Following passed nothing while the stream held more, and the entries `first` through `last` were read from
    /// the stream's leader by position instead (JetStreamLog+Reading.swift).
    case readFromLeader(namespace: String, first: UInt64, last: UInt64)
    /// JetStream acknowledged the appends `ids` at `position`, but the copy followed holds another entry there: they
    /// were published again (``UnconfirmedAppends``).
    case appendMissing(namespace: String, position: UInt64, ids: [String])
}
