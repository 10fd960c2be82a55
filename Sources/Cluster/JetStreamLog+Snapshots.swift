import CNats
import Dispatch
import Primitives
import Store

/// Snapshots on a second stream of the namespace, `CANOPYS_<hex name>`, with the log's replica count.
///
/// A snapshot is stored as chunks on `canopy.snap.<hex>.data` (each at most half the servers' `max_payload`, so a
/// chunk fetched through JetStream's JSON API still fits), then a manifest on `canopy.snap.<hex>.manifest` naming
/// the snapshot's log position, length, CRC-32C and its chunks' stream sequences. Readers take the last manifest,
/// so a snapshot is visible only once complete. Once a snapshot is stored, the log keeps the entries after the
/// snapshot before it, and the snapshot stream keeps those two snapshots. A node stores its snapshots one at a time
/// (``snapshotQueue``): the second would otherwise find the stream the first is still creating, without a leader to
/// answer it.
extension JetStreamLog {
    public var snapshotInterval: UInt64 { cluster.snapshotInterval }

    public func storeSnapshot(_ snapshot: [UInt8], position: UInt64,
                              completion: @escaping @Sendable (Result<Bool, ReplicationError>) -> Void)
    {
        snapshotQueue.async { [self] in completion(storeSnapshotNow(snapshot, position: position)) }
    }

    public func latestSnapshot(completion: @escaping @Sendable (Result<StoredSnapshot?, ReplicationError>) -> Void) {
        DispatchQueue.global().async { [self] in completion(latestSnapshotNow()) }
    }

    private func storeSnapshotNow(_ snapshot: [UInt8], position: UInt64) -> Result<Bool, ReplicationError> {
        guard let context = openContext() else { return .failure(ReplicationError("the log is not open")) }
        var last: UInt64 = 0
        var error = jsErrCode(rawValue: 0)
        let status = canopy_js_ensure_stream(context, snapshotStream, "\(snapshotSubject).*", Int64(cluster.replicas),
                                             600_000_000_000, 16 << 20, &last, &error)
        guard status == NATS_OK else { return .failure(failure("stream \(snapshotStream)", status)) }
        let previous: SnapshotManifest?
        switch lastManifest(context) {
        case .failure(let error): return .failure(error)
        case .success(let manifest): previous = manifest
        }
        if let previous, previous.position >= position { return .success(false) }
        let chunkBytes = max(1024, maxPayloadBytes / 2)
        var chunks: [UInt64] = []
        for (index, start) in stride(from: 0, to: max(1, snapshot.count), by: chunkBytes).enumerated() {
            let chunk = snapshot[start..<min(snapshot.count, start + chunkBytes)]
            var sequence: UInt64 = 0
            let status = chunk.withUnsafeBytes { bytes in
                canopy_js_publish(context, "\(snapshotSubject).data", bytes.baseAddress, Int32(bytes.count),
                                  "s\(position)-\(index)", &sequence)
            }
            guard status == NATS_OK else { return .failure(failure("snapshot chunk", status)) }
            chunks.append(sequence)
        }
        let manifest = SnapshotManifest(position: position, byteCount: snapshot.count,
                                        checksum: CRC32C.checksum(snapshot), chunks: chunks)
        let text = Array(manifest.text.utf8)
        var sequence: UInt64 = 0
        let published = text.withUnsafeBytes { bytes in
            canopy_js_publish(context, "\(snapshotSubject).manifest", bytes.baseAddress, Int32(bytes.count),
                              "m\(position)", &sequence)
        }
        guard published == NATS_OK else { return .failure(failure("publishing the snapshot manifest", published)) }
        if let previous, let oldestChunk = previous.chunks.min() {
            // Best effort: what is not purged now is purged with the next snapshot.
            _ = canopy_js_purge_below(context, stream, previous.position + 1)
            _ = canopy_js_purge_below(context, snapshotStream, oldestChunk)
        }
        return .success(true)
    }

    private func latestSnapshotNow() -> Result<StoredSnapshot?, ReplicationError> {
        guard let context = openContext() else { return .failure(ReplicationError("the log is not open")) }
        // A snapshot stored meanwhile may purge the chunks of the one being read: then read the newer one.
        for _ in 0..<3 {
            let manifest: SnapshotManifest
            switch lastManifest(context) {
            case .failure(let error): return .failure(error)
            case .success(nil): return .success(nil)
            case .success(let found?): manifest = found
            }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(manifest.byteCount)
            var complete = true
            for chunk in manifest.chunks {
                switch message(context, stream: snapshotStream, sequence: chunk) {
                case .success(let data?): bytes += data
                case .success(nil): complete = false
                case .failure(let error): return .failure(error)
                }
                if !complete { break }
            }
            guard complete else { continue }
            guard bytes.count == manifest.byteCount, CRC32C.checksum(bytes) == manifest.checksum else {
                return .failure(ReplicationError("snapshot at \(manifest.position) in \(snapshotStream) is damaged"))
            }
            return .success(StoredSnapshot(position: manifest.position, bytes: bytes))
        }
        return .failure(ReplicationError("snapshots in \(snapshotStream) kept changing while read"))
    }

    /// The newest manifest (`nil` when no snapshot was stored).
    private func lastManifest(_ context: OpaquePointer) -> Result<SnapshotManifest?, ReplicationError> {
        var found: OpaquePointer?
        let status = canopy_js_get_last(&found, context, snapshotStream, "\(snapshotSubject).manifest")
        if status == NATS_NOT_FOUND { return .success(nil) }
        guard status == NATS_OK, let found else { return .failure(failure("snapshot manifest", status)) }
        let text = String(decoding: Self.data(of: found), as: UTF8.self)
        natsMsg_Destroy(found)
        guard let manifest = SnapshotManifest(text: text) else {
            return .failure(ReplicationError("unreadable snapshot manifest in \(snapshotStream)"))
        }
        return .success(manifest)
    }

    /// The payload at `sequence` of `stream` (`nil` when it was removed).
    private func message(_ context: OpaquePointer, stream: String, sequence: UInt64)
        -> Result<[UInt8]?, ReplicationError>
    {
        var found: OpaquePointer?
        let status = canopy_js_get(&found, context, stream, sequence)
        if status == NATS_NOT_FOUND { return .success(nil) }
        guard status == NATS_OK, let found else { return .failure(failure("message \(sequence)", status)) }
        defer { natsMsg_Destroy(found) }
        return .success(Self.data(of: found))
    }

    /// A message's payload, copied out of nats.c's message.
    static func data(of message: OpaquePointer) -> [UInt8] {
        let count = Int(natsMsg_GetDataLength(message))
        return natsMsg_GetData(message).map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    }

    private func failure(_ what: String, _ status: natsStatus) -> ReplicationError {
        ReplicationError("\(what) in \(stream): \(NATSCluster.text(status))")
    }
}

/// Where a stored snapshot is: `CANOPY-SNAPSHOT 1 <position> <bytes> <crc32c> <chunk sequence>,…` (text, parsed
/// as hostile input).
struct SnapshotManifest: Equatable {
    let position: UInt64
    let byteCount: Int
    let checksum: UInt32
    let chunks: [UInt64]

    init(position: UInt64, byteCount: Int, checksum: UInt32, chunks: [UInt64]) {
        self.position = position
        self.byteCount = byteCount
        self.checksum = checksum
        self.chunks = chunks
    }

    init?(text: String) {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[0] == "CANOPY-SNAPSHOT", fields[1] == "1",
            let position = UInt64(fields[2]), let byteCount = Int(fields[3]), byteCount >= 0,
            let checksum = UInt32(fields[4])
        else { return nil }
        let chunks = fields[5].split(separator: ",").compactMap { UInt64($0) }
        guard !chunks.isEmpty, chunks.count == fields[5].split(separator: ",").count, chunks.count <= 100_000 else {
            return nil
        }
        self.init(position: position, byteCount: byteCount, checksum: checksum, chunks: chunks)
    }

    var text: String {
        "CANOPY-SNAPSHOT 1 \(position) \(byteCount) \(checksum) \(chunks.map(String.init).joined(separator: ","))"
    }
}
