import HTTP1
import WebSocket
import WebSocketDeflate

/// Validates an upgrade request (RFC 6455 §4.2) and negotiates permessage-deflate (RFC 7692),
/// producing the 101 response and the session's state machine, or the refusal to send.
struct WebSocketUpgrade: Sendable {
    struct Accepted {
        var response: HTTPResponse
        var machine: WebSocketConnectionStateMachine
    }

    struct Rejection: Error {
        var response: HTTPResponse
    }

    private let handshake: WebSocketHandshakeConfiguration
    private let limits: WebSocketLimits

    /// Builds the handshake policy once from the server configuration.
    init(configuration: ServerConfiguration) {
        let deflate = PerMessageDeflateConfiguration(compressionThreshold: configuration.compressionThresholdBytes)
        handshake = WebSocketHandshakeConfiguration(
            allowedOrigins: configuration.allowedOrigins.isEmpty ? nil : Set(configuration.allowedOrigins),
            negotiateExtensions: configuration.permessageDeflate ? PerMessageDeflate.serverNegotiation(configuration: deflate) : nil)
        limits = WebSocketLimits(
            maxFrameBytes: configuration.maxWebSocketMessageBytes, maxMessageBytes: configuration.maxWebSocketMessageBytes)
    }

    private static func status(forCode code: Int) -> HTTPStatus {
        switch code {
        case 403: .forbidden
        case 426: .upgradeRequired
        default: .badRequest
        }
    }

    func negotiate(_ head: HTTPRequestHead) -> Result<Accepted, Rejection> {
        let request = WebSocketHandshakeRequest(
            method: head.method, httpVersion: (head.version.major, head.version.minor),
            headerValues: { head.headers.values(for: $0) })
        switch WebSocketHandshake.validate(request, configuration: handshake) {
        case .rejected(let error):
            var response = HTTPResponse.error(Self.status(forCode: error.statusCode), message: error.message)
            for (name, value) in error.responseHeaders { response.headers.add(name: name, value: value) }
            return .failure(Rejection(response: response))
        case .accepted(let acceptance):
            var headers = HTTPHeaders()
            for (name, value) in acceptance.headers { headers.add(name: name, value: value) }
            let response = HTTPResponse(status: .switchingProtocols, headers: headers, body: [])
            let machine = WebSocketConnectionStateMachine(role: .server, limits: limits, codec: acceptance.codec)
            return .success(Accepted(response: response, machine: machine))
        }
    }
}
