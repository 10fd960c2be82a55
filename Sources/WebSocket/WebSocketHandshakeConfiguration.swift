/// Server-side handshake policy: allowed origins and the subprotocol and extension negotiation hooks.
public struct WebSocketHandshakeConfiguration: Sendable {
    /// Lowercased origins (`scheme://host[:port]`) allowed to connect, or `nil` to allow any (the default).
    ///
    /// Origin checks stop other web pages from opening WebSockets with a visitor's cookies (RFC 6455 §10.2);
    /// they do nothing against non-browser clients, which can send any Origin.
    public var allowedOrigins: Set<String>?
    /// Whether a request without an `Origin` header passes the origin check (default `true`).
    ///
    /// Browsers always send `Origin`, so a missing one means a non-browser client, which could forge it anyway.
    public var allowsMissingOrigin: Bool
    /// Picks one of the subprotocols the client offered (in its order), or `nil` for none (§4.2.2 item 5.4).
    /// A returned value the client did not offer is ignored. `nil` hook: never select a subprotocol.
    public var selectSubprotocol: (@Sendable ([String]) -> String?)?
    /// Accepts at most one of the client's extension offers, in their order of preference (§9.1), returning the
    /// response header value and the per-connection codec; `nil` hook: no extensions.
    public var negotiateExtensions: (@Sendable ([WebSocketExtensionOffer]) -> WebSocketExtensionAcceptance?)?

    /// Creates a configuration; the defaults accept any origin and negotiate nothing.
    public init(
        allowedOrigins: Set<String>? = nil, allowsMissingOrigin: Bool = true,
        selectSubprotocol: (@Sendable ([String]) -> String?)? = nil,
        negotiateExtensions: (@Sendable ([WebSocketExtensionOffer]) -> WebSocketExtensionAcceptance?)? = nil
    ) {
        self.allowedOrigins = allowedOrigins.map { Set($0.map { HTTPFieldList.lowercasedASCII($0) }) }
        self.allowsMissingOrigin = allowsMissingOrigin
        self.selectSubprotocol = selectSubprotocol
        self.negotiateExtensions = negotiateExtensions
    }
}

/// An extension negotiated by ``WebSocketHandshakeConfiguration/negotiateExtensions``.
public struct WebSocketExtensionAcceptance {
    /// The `Sec-WebSocket-Extensions` response value, e.g. `permessage-deflate; server_no_context_takeover`.
    public var responseHeaderValue: String
    /// The codec the connection's state machine uses for this extension.
    public var codec: any WebSocketMessageCodec

    /// Creates an acceptance.
    public init(responseHeaderValue: String, codec: any WebSocketMessageCodec) {
        self.responseHeaderValue = responseHeaderValue
        self.codec = codec
    }
}
