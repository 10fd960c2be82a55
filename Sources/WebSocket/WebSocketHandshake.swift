import Primitives

/// The server side of the opening handshake (RFC 6455 §4.2): validates an upgrade request and produces the `101`
/// response headers, or the error response.
public enum WebSocketHandshake {
    /// The only protocol version this implementation speaks (§4.1, `Sec-WebSocket-Version: 13`).
    public static let version = "13"
    /// The GUID appended to the key before hashing (§1.3).
    public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The result of ``validate(_:configuration:)``.
    public enum Result {
        /// Switch protocols: send `101 Switching Protocols` with these headers, then speak WebSocket.
        case accepted(WebSocketHandshakeAcceptance)
        /// Refuse: respond with the error's status, headers and message, and keep HTTP semantics.
        case rejected(WebSocketHandshakeError)
    }

    /// `Sec-WebSocket-Accept` for a key: base64(SHA-1(key + GUID)) (§4.2.2 item 5.4).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + acceptGUID).utf8)))
    }

    /// Validates an upgrade request (§4.2.1) and negotiates subprotocol and extensions (§4.2.2).
    public static func validate(
        _ request: WebSocketHandshakeRequest, configuration: WebSocketHandshakeConfiguration = .init()
    ) -> Result {
        guard request.method == "GET" else { return .rejected(.methodNotGet(request.method)) }
        guard request.httpVersion.major > 1 || (request.httpVersion.major == 1 && request.httpVersion.minor >= 1)
        else { return .rejected(.httpVersionTooOld) }
        guard request.headerValues("Host").contains(where: { !$0.isEmpty }) else { return .rejected(.missingHost) }
        guard HTTPFieldList.contains("websocket", in: request.headerValues("Upgrade")) else {
            return .rejected(.missingUpgradeWebSocket)
        }
        guard HTTPFieldList.contains("upgrade", in: request.headerValues("Connection")) else {
            return .rejected(.missingConnectionUpgrade)
        }
        let versions = HTTPFieldList.elements(of: request.headerValues("Sec-WebSocket-Version"))
        guard versions.count == 1, versions[0] == version else {
            return .rejected(.unsupportedVersion(versions.first.map(String.init)))
        }
        let keys = request.headerValues("Sec-WebSocket-Key")
        guard keys.count == 1 else { return .rejected(.invalidKey) }
        let key = String(HTTPFieldList.trimmingWhitespace(keys[0][...]))
        guard Base64.decode(key)?.count == 16 else { return .rejected(.invalidKey) }
        if let error = checkOrigin(request, configuration: configuration) { return .rejected(error) }

        var headers: [(name: String, value: String)] = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Accept", acceptValue(forKey: key)),
        ]
        var subprotocol: String?
        let offeredSubprotocols = HTTPFieldList.elements(of: request.headerValues("Sec-WebSocket-Protocol"))
            .map(String.init)
        if let select = configuration.selectSubprotocol, !offeredSubprotocols.isEmpty,
            let chosen = select(offeredSubprotocols), offeredSubprotocols.contains(chosen)
        {
            subprotocol = chosen
            headers.append(("Sec-WebSocket-Protocol", chosen))
        }
        var extensionAcceptance: WebSocketExtensionAcceptance?
        if let negotiate = configuration.negotiateExtensions {
            let offers = WebSocketExtensionOffer.parse(headerLines: request.headerValues("Sec-WebSocket-Extensions"))
            if !offers.isEmpty, let accepted = negotiate(offers) {
                extensionAcceptance = accepted
                headers.append(("Sec-WebSocket-Extensions", accepted.responseHeaderValue))
            }
        }
        return .accepted(
            WebSocketHandshakeAcceptance(
                headers: headers, subprotocol: subprotocol,
                extensionResponse: extensionAcceptance?.responseHeaderValue, codec: extensionAcceptance?.codec))
    }

    private static func checkOrigin(
        _ request: WebSocketHandshakeRequest, configuration: WebSocketHandshakeConfiguration
    ) -> WebSocketHandshakeError? {
        guard let allowed = configuration.allowedOrigins else { return nil }
        let origins = request.headerValues("Origin")
        guard let origin = origins.first else {
            return configuration.allowsMissingOrigin ? nil : .originNotAllowed(nil)
        }
        let normalized = HTTPFieldList.lowercasedASCII(HTTPFieldList.trimmingWhitespace(origin[...]))
        guard origins.count == 1, allowed.contains(normalized) else { return .originNotAllowed(origin) }
        return nil
    }
}
