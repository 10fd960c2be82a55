import DataModel

/// One message from the server to a client (wire-protocol.md §3, §5, §11).
///
/// Encode with ``encoded()``; for fan-out of one change to many listens use ``EncodedPush`` instead, which
/// encodes the shared part once. ``parse(_:limits:)`` reads messages back (protocol test clients, load testers).
public enum ServerMessage: Sendable, Equatable {
    /// The hello, sent first on every socket (§3.2).
    case handshake(Handshake)
    /// Answer to a client ping: `{"t":"c","d":{"t":"o","d":{}}}` (§3.3).
    case pong
    /// Tells the client to reconnect to `host` (load shedding, migration).
    case reset(host: String)
    /// Tells the client to stop reconnecting for good; only for a database that is really gone — for restarts,
    /// just close the socket.
    case shutdown(reason: String)
    /// A server error the JS SDK logs (`Server Error: …`); no other effect.
    case error(String)
    /// The answer to request `requestNumber` (§5.1).
    case response(requestNumber: Int, status: ResponseStatus, payload: ResponsePayload)
    /// Overwrite the data at `path` (`a: "d"`); `tag` only for a tagged (query) listen.
    case dataPush(path: Path, data: Node, tag: Int?)
    /// Overwrite each relative location under `path` (`a: "m"`); `tag` only for a tagged listen.
    case mergePush(path: Path, changes: [MergeChange], tag: Int?)
    /// The listen at `path` is revoked (`a: "c"`); `query` is the tagged listen's query object exactly as the client
    /// sent it (written as a one-element array), `nil` for a default listen.
    case listenRevoked(path: Path, query: JSONValue?)
    /// The connection's credential is revoked (`a: "ac"`); clients drop it and reconnect.
    case authRevoked(status: ResponseStatus, reason: String)
    /// The App Check token is revoked (`a: "apc"`); clients refresh it without disconnecting.
    case appCheckRevoked(status: ResponseStatus, reason: String)
    /// Security debug text the client prints (`a: "sd"`).
    case securityDebug(message: String)

    /// `ok` with `""`: the answer to writes, onDisconnect operations, stats, unauth, App Check and unlisten.
    public static func ok(_ requestNumber: Int) -> ServerMessage {
        .response(requestNumber: requestNumber, status: .ok, payload: .empty)
    }

    /// `ok` for a listen, after its data push: `d` must be an object (Android reads `w` from it), `{}` or
    /// `{"w":[…]}` with warnings such as ``ResponsePayload/noIndexWarning``.
    public static func listenOK(_ requestNumber: Int, warnings: [String] = []) -> ServerMessage {
        .response(
            requestNumber: requestNumber, status: .ok,
            payload: warnings.isEmpty ? .emptyObject : .listenWarnings(warnings))
    }

    /// A failure answer with a message, e.g. `permission_denied` / `"Permission denied"`.
    public static func failure(_ requestNumber: Int, status: ResponseStatus, message: String) -> ServerMessage {
        .response(requestNumber: requestNumber, status: status, payload: .text(message))
    }
}

/// The hello's fields (§3.2).
public struct Handshake: Sendable, Equatable {
    /// Server time, milliseconds since the Unix epoch; written as a JSON integer (Android casts it to `Long`).
    public var timestamp: Int
    /// The `host[:port]` clients use from now on — echo the upgrade request's `Host` (§1.4; iOS caches it across
    /// launches, so never an internal name).
    public var host: String
    /// Session id; clients send it back as `ls` when they reconnect.
    public var sessionID: String
    /// Protocol version, `"5"`.
    public var version: String

    /// The protocol version this module speaks (the `v` of the hello and of the connection URL).
    public static let protocolVersion = "5"

    /// Creates a hello, for protocol version 5 unless told otherwise.
    public init(timestamp: Int, host: String, sessionID: String, version: String = Handshake.protocolVersion) {
        self.timestamp = timestamp
        self.host = host
        self.sessionID = sessionID
        self.version = version
    }
}

/// A response status string (§5.2); any string is allowed, clients surface unknown ones as `STATUS: d`.
public struct ResponseStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The wire text.
    public let rawValue: String

    /// Wraps a status string.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Success.
    public static let ok = ResponseStatus(rawValue: "ok")
    /// Rejected by security rules (listen, write, onDisconnect, get, auth).
    public static let permissionDenied = ResponseStatus(rawValue: "permission_denied")
    /// A compare-and-set put whose hash does not match; the client re-runs its transaction.
    public static let dataStale = ResponseStatus(rawValue: "datastale")
    /// An unparsable or invalid credential; the client refreshes its token and reconnects.
    public static let invalidToken = ResponseStatus(rawValue: "invalid_token")
    /// An expired credential.
    public static let expiredToken = ResponseStatus(rawValue: "expired_token")
    /// A listen or get whose result is too large.
    public static let tooBig = ResponseStatus(rawValue: "too_big")
    /// The service cannot answer now.
    public static let unavailable = ResponseStatus(rawValue: "unavailable")
    /// A write above the write size limit (spelling **UNCONFIRMED**, inferred from the SDKs' error text).
    public static let writeTooBig = ResponseStatus(rawValue: "write_too_big")
    /// A per-connection limit refused the request (a Canopy status; SDKs report it as the operation's error).
    public static let limitExceeded = ResponseStatus(rawValue: "limit_exceeded")

    /// The wire text.
    public var description: String { rawValue }
}

/// The `d` of a response.
public enum ResponsePayload: Sendable, Equatable {
    /// A string: `""` on success, the message on failure.
    case text(String)
    /// Data in export format (the result of a get).
    case data(Node)
    /// Any other JSON: the listen `ok` object, auth info.
    case json(JSONValue)

    /// `""`.
    public static let empty = ResponsePayload.text("")
    /// `{}`, the usual listen `ok` payload.
    public static let emptyObject = ResponsePayload.json(.object([]))
    /// The warning that makes clients log "Using an unspecified index" (§6.6 step 6).
    public static let noIndexWarning = "no_index"

    /// `{"w":[warnings…]}`.
    public static func listenWarnings(_ warnings: [String]) -> ResponsePayload {
        .json(.object([(WireKey.warnings, .array(warnings.map { .string($0) }))]))
    }
}

/// One entry of a merge push: a location relative to the push's path and its new value (`empty` deletes).
public struct MergeChange: Sendable, Equatable {
    /// The relative location, or the priority of one.
    public var target: WriteTarget
    /// The new value, resolved (no server values); for a priority target a number or string leaf, or empty.
    public var node: Node

    /// Creates a change.
    public init(target: WriteTarget, node: Node) {
        self.target = target
        self.node = node
    }
}
