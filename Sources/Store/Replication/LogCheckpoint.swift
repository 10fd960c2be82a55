/// An entry that records one replica's ``Checkpoint`` in the log itself and changes nothing: `'C'`, then the
/// position, the hash and the node, separated by spaces.
///
/// Announcements on the side reach only the replicas running at that moment. A replica that starts later, or
/// rebuilds, replays the log from whichever copy the log serves it then, and a NATS 2.9 server's copy can differ
/// from the others' for good (docs/reliability.md). Recorded in the log, the hashes the replicas computed while
/// serving travel with the entries: a replica that replays a copy that went wrong finds itself outvoted by them.
/// Every replica skips a checkpoint entry alike.
public enum LogCheckpoint {
    private static let magic: UInt8 = 0x43

    /// The entry recording `checkpoint`.
    public static func payload(_ checkpoint: Checkpoint) -> [UInt8] {
        [magic] + Array("\(checkpoint.position) \(checkpoint.hash) \(checkpoint.node)".utf8)
    }

    /// The checkpoint `payload` records when it is a checkpoint entry, `nil` otherwise.
    static func checkpoint(of payload: [UInt8]) -> Checkpoint? {
        guard payload.first == magic else { return nil }
        let fields = String(decoding: payload.dropFirst(), as: UTF8.self).split(separator: " ")
        guard fields.count == 3, let position = UInt64(fields[0]) else { return nil }
        return Checkpoint(node: String(fields[2]), position: position, hash: String(fields[1]))
    }
}
