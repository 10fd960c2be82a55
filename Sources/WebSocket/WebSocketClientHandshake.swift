import Primitives

/// The client side of the opening handshake (RFC 6455 §4.1): builds the upgrade request and checks the response.
///
/// Used by load-testing clients and by tests that connect a client state machine to a server. Parsing the HTTP
/// response head is left to the caller; this type checks the status and the header values.
public struct WebSocketClientHandshake: Sendable {
    /// The `Sec-WebSocket-Key` sent (base64 of 16 random bytes).
    public let key: String
    /// The `Sec-WebSocket-Accept` value a genuine server must answer with.
    public let expectedAccept: String

    /// Starts a handshake with a fresh random key (§4.1: "randomly selected" per connection).
    public init() {
        self.init(key: Self.makeKey())
    }

    /// Starts a handshake with a given key (for reproducible tests).
    public init(key: String) {
        self.key = key
        self.expectedAccept = WebSocketHandshake.acceptValue(forKey: key)
    }

    /// A new random key: base64 of 16 bytes from the system's secure generator.
    public static func makeKey() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64.encode((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// The request head (request line and headers, ending with the blank line) to send.
    /// - Parameters:
    ///   - host: The `Host` value, e.g. `127.0.0.1:9000`.
    ///   - target: The request target, e.g. `/.ws?v=5`.
    ///   - subprotocols: Offered subprotocols, most preferred first (omitted when empty).
    ///   - extensions: A `Sec-WebSocket-Extensions` offer, e.g. from permessage-deflate (omitted when `nil`).
    ///   - additionalHeaders: Any further headers, such as `Origin`.
    public func requestHead(
        host: String, target: String, subprotocols: [String] = [], extensions: String? = nil,
        additionalHeaders: [(name: String, value: String)] = []
    ) -> [UInt8] {
        var text = "GET \(target) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: \(WebSocketHandshake.version)\r\n"
        if !subprotocols.isEmpty { text += "Sec-WebSocket-Protocol: \(subprotocols.joined(separator: ", "))\r\n" }
        if let extensions { text += "Sec-WebSocket-Extensions: \(extensions)\r\n" }
        for header in additionalHeaders { text += "\(header.name): \(header.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Checks the server's response (§4.1, "the client MUST validate the server's response").
    /// - Parameters:
    ///   - statusCode: The response status.
    ///   - headerValues: Every field line with the given name, matched case-insensitively.
    ///   - offeredSubprotocols: What ``requestHead(host:target:subprotocols:extensions:additionalHeaders:)`` offered.
    /// - Returns: The server's chosen subprotocol and its extension responses (for the extension to accept or
    ///   refuse; an unknown or unacceptable extension must fail the connection).
    public func validateResponse(
        statusCode: Int, headerValues: (String) -> [String], offeredSubprotocols: [String] = []
    ) throws(WebSocketClientHandshakeError) -> (subprotocol: String?, extensions: [WebSocketExtensionOffer]) {
        guard statusCode == 101 else { throw .unexpectedStatus(statusCode) }
        guard HTTPFieldList.contains("websocket", in: headerValues("Upgrade")) else {
            throw .missingUpgradeWebSocket
        }
        guard HTTPFieldList.contains("upgrade", in: headerValues("Connection")) else {
            throw .missingConnectionUpgrade
        }
        let accepts = headerValues("Sec-WebSocket-Accept")
        guard accepts.count == 1, HTTPFieldList.trimmingWhitespace(accepts[0][...]) == expectedAccept[...] else {
            throw .acceptMismatch
        }
        let protocols = HTTPFieldList.elements(of: headerValues("Sec-WebSocket-Protocol")).map(String.init)
        guard protocols.count <= 1 else { throw .unexpectedSubprotocol(protocols.joined(separator: ", ")) }
        if let chosen = protocols.first, !offeredSubprotocols.contains(chosen) {
            throw .unexpectedSubprotocol(chosen)
        }
        var extensions: [WebSocketExtensionOffer] = []
        for line in headerValues("Sec-WebSocket-Extensions") {
            let parsed = WebSocketExtensionOffer.parse(headerLines: [line])
            // The parser yields nothing for a malformed line; only a blank (or comma-only) line may do that.
            guard !parsed.isEmpty || HTTPFieldList.elements(of: [line]).isEmpty else { throw .malformedExtensions }
            extensions += parsed
        }
        return (protocols.first, extensions)
    }
}
