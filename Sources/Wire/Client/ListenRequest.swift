import DataModel

/// A `q` listen (wire-protocol.md §6.5, §6.6).
///
/// Untagged listens are default listens: the whole location, pushed without tag. Tagged listens carry the client's
/// query object and get tagged pushes of the query's window.
public struct ListenRequest: Sendable, Equatable {
    /// The location listened to.
    public var path: Path
    /// The query, normalized (``QueryParams/all`` for default listens).
    public var query: QueryParams
    /// The query object exactly as the client sent it; echo it in a listen revocation (``ServerMessage/listenRevoked(path:query:)``),
    /// since JS matches the revoked listen by this object's own serialization.
    public var queryObject: JSONValue?
    /// The client's tag for a filtered query; pushes for this listen carry it.
    public var tag: Int?
    /// Hash of the data the client holds for this view (`""`: nothing); when it equals the current data's
    /// ``NodeHash``, the initial data push may be skipped.
    public var hash: String?
    /// Android/iOS compound hash for range merges; a server may ignore it.
    public var compoundHash: CompoundHash?

    /// Creates a listen request.
    public init(
        path: Path, query: QueryParams = .all, queryObject: JSONValue? = nil, tag: Int? = nil, hash: String? = nil,
        compoundHash: CompoundHash? = nil
    ) {
        self.path = path
        self.query = query
        self.queryObject = queryObject
        self.tag = tag
        self.hash = hash
        self.compoundHash = compoundHash
    }

    /// Identifies this listen within its connection; an unlisten or a second listen with the same key refers to it.
    public var key: ListenKey { ListenKey(path: path, tag: tag) }

    /// The query that decides the view's data, for sharing one view among listens: a query that loads all data
    /// (an `orderBy` without range or limit) shows the same data as the default listen, whatever its index.
    public var viewQuery: QueryParams { query.loadsAllData ? .all : query }
}

/// An `n` unlisten (§6.7): removes the listen with the same ``key``.
public struct UnlistenRequest: Sendable, Equatable {
    /// The location.
    public var path: Path
    /// The query, normalized.
    public var query: QueryParams
    /// The query object as sent.
    public var queryObject: JSONValue?
    /// The listen's tag, for filtered queries.
    public var tag: Int?

    /// Creates an unlisten request.
    public init(path: Path, query: QueryParams = .all, queryObject: JSONValue? = nil, tag: Int? = nil) {
        self.path = path
        self.query = query
        self.queryObject = queryObject
        self.tag = tag
    }

    /// The key of the listen to remove.
    public var key: ListenKey { ListenKey(path: path, tag: tag) }
}

/// A listen's identity within one connection: its path and its tag (`nil` for the default listen at the path).
///
/// Tags are unique per client process, so `(path, tag)` is what both the SDK and the server match on.
public struct ListenKey: Sendable, Hashable {
    /// The location.
    public var path: Path
    /// The tag; `nil` for the default listen.
    public var tag: Int?

    /// Creates a key.
    public init(path: Path, tag: Int?) {
        self.path = path
        self.tag = tag
    }
}

/// The optional `ch` of a listen (Android, iOS): the cached view's hash split into ranges (§6.5).
public struct CompoundHash: Sendable, Equatable {
    /// Split points (`ps`), n − 1 paths for n hashes.
    public var paths: [Path]
    /// Range hashes (`hs`).
    public var hashes: [String]

    /// Creates a compound hash.
    public init(paths: [Path], hashes: [String]) {
        self.paths = paths
        self.hashes = hashes
    }
}

/// A `g` one-shot read (§6.9): the query result in export format, no listen registered.
public struct GetRequest: Sendable, Equatable {
    /// The location.
    public var path: Path
    /// The query (``QueryParams/all`` for `{}`).
    public var query: QueryParams
    /// The query object as sent.
    public var queryObject: JSONValue?

    /// Creates a get request.
    public init(path: Path, query: QueryParams = .all, queryObject: JSONValue? = nil) {
        self.path = path
        self.query = query
        self.queryObject = queryObject
    }
}
