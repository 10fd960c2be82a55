import DataModel

/// A `p` put or an `o` onDisconnect put (wire-protocol.md §6.8, §10): replace the node (or its priority) at
/// ``target`` with ``value``.
public struct PutRequest: Sendable, Equatable {
    /// The node, or the priority of a node when the path ends in `.priority` (`setPriority()`).
    public var target: WriteTarget
    /// The data, validated against the target's depth; server values still to be resolved at apply time.
    public var value: WriteValue
    /// Compare-and-set (§8): apply only when the current node's ``NodeHash`` equals this (`""`: only when empty),
    /// else answer `datastale`. Never set on onDisconnect puts.
    public var hash: String?

    /// Creates a put.
    public init(target: WriteTarget, value: WriteValue, hash: String? = nil) {
        self.target = target
        self.value = value
        self.hash = hash
    }
}

/// An `m` merge or an `om` onDisconnect merge (§6.8, §10): overwrite each relative location under ``path``,
/// atomically.
public struct MergeRequest: Sendable, Equatable {
    /// The location the entries are relative to.
    public var path: Path
    /// The entries in the client's order; no two overlap.
    public var entries: [UpdateEntry]

    /// Creates a merge.
    public init(path: Path, entries: [UpdateEntry]) {
        self.path = path
        self.entries = entries
    }
}

/// An `auth` or `gauth` request (§6.2).
public struct AuthRequest: Sendable, Equatable {
    /// Which action the client chose: JS picks `auth` for JWTs with `iat`, `gauth` for other credentials (OAuth
    /// access tokens, the emulator's `owner`); Android picks `gauth` for `gauth|` tokens; iOS always `auth`.
    public enum Method: Sendable, Equatable {
        /// `auth`.
        case auth
        /// `gauth`.
        case gauth
    }

    /// The action used.
    public var method: Method
    /// The credential (`cred`): a JWT, an access token, a legacy secret or `owner`.
    public var credential: String
    /// `authvar`: the Node Admin `databaseAuthVariableOverride`; rules see it as `auth`.
    public var authVariable: JSONValue?
    /// `noauth: true`: the admin asked to be evaluated as unauthenticated.
    public var noAuth: Bool

    /// Creates an auth request.
    public init(method: Method, credential: String, authVariable: JSONValue? = nil, noAuth: Bool = false) {
        self.method = method
        self.credential = credential
        self.authVariable = authVariable
        self.noAuth = noAuth
    }
}
