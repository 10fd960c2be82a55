/// Every member name and fixed string of the Firebase wire protocol (wire-protocol.md §3–§11), in one place.
///
/// Firebase's one-letter keys mean different things at different levels (`d` is the envelope payload, a push's
/// data and a response's data; `t` is the layer, the control type and a push's tag), so the constants are named
/// after their meaning, not their spelling.
enum WireKey {
    // MARK: Envelope (§3.1)

    /// Envelope layer: `"c"` control or `"d"` data.
    static let layer = "t"
    /// Envelope payload.
    static let payload = "d"
    /// Layer value of control messages.
    static let controlLayer = "c"
    /// Layer value of data messages.
    static let dataLayer = "d"

    // MARK: Control messages (§3.2, §3.3)

    /// Control message type.
    static let controlType = "t"
    /// Control message payload.
    static let controlPayload = "d"
    /// Server hello.
    static let hello = "h"
    /// Client ping.
    static let ping = "p"
    /// Server pong.
    static let pong = "o"
    /// Server reset (redirect to another host).
    static let reset = "r"
    /// Server shutdown (clients stop reconnecting).
    static let shutdown = "s"
    /// Server error text.
    static let error = "e"
    /// Long-poll switch acknowledgement.
    static let switchAck = "a"
    /// Long-poll end of transmission.
    static let endOfTransmission = "n"
    /// Hello: server time in ms.
    static let helloTimestamp = "ts"
    /// Hello: protocol version.
    static let helloVersion = "v"
    /// Hello: host the client should use.
    static let helloHost = "h"
    /// Hello: session id.
    static let helloSession = "s"

    // MARK: Data messages (§5.1)

    /// Request number.
    static let requestNumber = "r"
    /// Action of a request or push.
    static let action = "a"
    /// Body of a request, response or push.
    static let body = "b"
    /// Response status.
    static let status = "s"
    /// Response data.
    static let responseData = "d"

    // MARK: Request and push bodies (§6, §11)

    /// Path.
    static let path = "p"
    /// Written, pushed or returned data.
    static let data = "d"
    /// Hash (compare-and-set or listen).
    static let hash = "h"
    /// Query object.
    static let query = "q"
    /// Listen tag.
    static let tag = "t"
    /// Compound hash of a listen (Android, iOS).
    static let compoundHash = "ch"
    /// Compound hash: split paths.
    static let compoundHashPaths = "ps"
    /// Compound hash: range hashes.
    static let compoundHashHashes = "hs"
    /// Auth credential.
    static let credential = "cred"
    /// Auth variable override (Node Admin `databaseAuthVariableOverride`).
    static let authVariable = "authvar"
    /// Explicitly unauthenticated override.
    static let noAuth = "noauth"
    /// App Check token.
    static let appCheckToken = "token"
    /// Stats counters.
    static let counters = "c"
    /// Listen warnings inside a listen's `ok` data.
    static let warnings = "w"
    /// Auth or App Check revocation status.
    static let revokeStatus = "s"
    /// Auth or App Check revocation reason.
    static let revokeReason = "d"
    /// Security debug message.
    static let securityDebugMessage = "msg"

    // MARK: Client actions (§6.1)

    /// Stats.
    static let statsAction = "s"
    /// Authenticate with a JWT.
    static let authAction = "auth"
    /// Authenticate with another credential.
    static let gauthAction = "gauth"
    /// Drop credentials.
    static let unauthAction = "unauth"
    /// App Check token.
    static let appCheckAction = "appcheck"
    /// Drop the App Check token (Android).
    static let unappCheckAction = "unappcheck"
    /// Drop the App Check token (the JS SDK's spelling).
    static let unappCheckActionJS = "unappeck"
    /// Listen.
    static let listenAction = "q"
    /// Legacy listen alias.
    static let legacyListenAction = "l"
    /// Unlisten.
    static let unlistenAction = "n"
    /// Legacy unlisten alias.
    static let legacyUnlistenAction = "u"
    /// Put (set).
    static let putAction = "p"
    /// Merge (update).
    static let mergeAction = "m"
    /// onDisconnect put.
    static let onDisconnectPutAction = "o"
    /// onDisconnect merge.
    static let onDisconnectMergeAction = "om"
    /// onDisconnect cancel.
    static let onDisconnectCancelAction = "oc"
    /// One-shot get.
    static let getAction = "g"

    // MARK: Server pushes (§11)

    /// Data overwrite push.
    static let dataPush = "d"
    /// Merge push.
    static let mergePush = "m"
    /// Listen revoked.
    static let listenRevoked = "c"
    /// Auth revoked.
    static let authRevoked = "ac"
    /// App Check revoked.
    static let appCheckRevoked = "apc"
    /// Security debug text.
    static let securityDebug = "sd"
}
