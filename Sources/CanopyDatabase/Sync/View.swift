import DataModel

/// One observed location and query: its listen, the server's data for it, and the registrations whose events it
/// raises. Owned by the database's queue.
final class View {
    let path: Path
    let query: QueryParams
    /// The listen's tag (queries that filter); `nil` for a default listen.
    let tag: Int?
    /// The server's data at ``path`` (for a tagged view, the query's window), `nil` until it arrived.
    var serverNode: Node?
    /// The data events were last raised from, `nil` before the first events.
    var raised: Node?
    var registrations: [Registration] = []

    init(path: Path, query: QueryParams, tag: Int?) {
        self.path = path
        self.query = query
        self.tag = tag
    }

    /// The identity of a view: one per location and query.
    struct Key: Hashable {
        let path: Path
        let query: QueryParams
    }

    var key: Key { Key(path: path, query: query) }
}

/// One `observe` call: the kind of event it wants and its blocks.
struct Registration {
    let handle: UInt
    let kind: DataEventType
    let block: (DataSnapshot, String?) -> Void
    let cancel: ((any Error) -> Void)?
    /// Removed after its first event (`observeSingleEvent`).
    let once: Bool
}
