import TLS
import TestSupport
import WebSocket
import WebSocketDeflate

/// A blocking WebSocket client for tests: real socket, optional TLS, the WebSocket module's
/// client-role state machine, optional permessage-deflate.
final class TestWebSocketClient {
    private let raw: RawClient
    private let tls: TLSSession?
    private var machine: WebSocketConnectionStateMachine
    private var plaintext: [UInt8] = []
    private var pending: [WebSocketConnectionStateMachine.Action] = []
    /// The upgrade response's headers (lowercased names).
    private(set) var responseHeaders: [String: String] = [:]

    init(port: UInt16, path: String = "/echo", deflate: Bool = false, tls tlsContext: TLSContext? = nil) throws {
        raw = try RawClient(port: port)
        if let tlsContext {
            let session = try TLSSession(context: tlsContext, serverName: "localhost")
            try session.startHandshake()
            tls = session
        } else {
            tls = nil
        }
        let handshake = WebSocketClientHandshake()
        let deflateConfiguration = PerMessageDeflateConfiguration(compressionThreshold: 0)
        let offer = deflate ? PerMessageDeflate.clientOffer(configuration: deflateConfiguration) : nil
        machine = WebSocketConnectionStateMachine(role: .client)
        try sendRaw(handshake.requestHead(host: "localhost", target: path, extensions: offer))
        var response: RawResponse?
        while response == nil {
            response = RawResponse.parse(&plaintext)
            if response == nil { try receiveMore() }
        }
        guard let response, response.status == 101 else { throw TestWebSocketError.rejected(response?.status ?? 0) }
        responseHeaders = response.headers
        let headers = response.headers
        let result = try handshake.validateResponse(statusCode: response.status, headerValues: { name in
            headers[name.lowercased()].map { [$0] } ?? []
        })
        var codec: (any WebSocketMessageCodec)?
        if let answer = result.extensions.first,
            let parameters = PerMessageDeflate.acceptResponse(answer, configuration: deflateConfiguration)
        {
            codec = PerMessageDeflateCodec(role: .client, parameters: parameters, configuration: deflateConfiguration)
        }
        machine = WebSocketConnectionStateMachine(role: .client, codec: codec)
        if !plaintext.isEmpty {
            pending += machine.bytesReceived(plaintext)
            plaintext.removeAll()
        }
    }

    func send(text: String) throws {
        try sendRaw(machine.encodeMessage(Array(text.utf8), opcode: .text))
    }

    func send(binary: [UInt8]) throws {
        try sendRaw(machine.encodeMessage(binary, opcode: .binary))
    }

    func sendClose(code: WebSocketCloseCode = .normalClosure) throws {
        try sendRaw(machine.close(code: code, reason: ""))
    }

    /// The next message; throws when the connection closes first.
    func nextMessage() throws -> WebSocketMessage {
        while true {
            while !pending.isEmpty {
                let action = pending.removeFirst()
                switch action {
                case .message(let message): return message
                case .send(let bytes): try sendRaw(bytes)
                case .closeConnection(let closure): throw TestWebSocketError.closed(closure)
                }
            }
            try receiveMore()
            pending += machine.bytesReceived(plaintext)
            plaintext.removeAll()
        }
    }

    /// Reads until the connection closes and returns how (messages before it are skipped).
    func nextClosure() throws -> WebSocketClosure {
        while true {
            do {
                _ = try nextMessage()
            } catch TestWebSocketError.closed(let closure) {
                return closure
            }
        }
    }

    private func sendRaw(_ bytes: [UInt8]) throws {
        guard let tls else {
            try raw.send(bytes)
            return
        }
        try bytes.withUnsafeBytes { try tls.writePlaintext($0) }
        while let ciphertext = tls.takeCiphertext() { try raw.send(ciphertext) }
    }

    private func receiveMore() throws {
        let bytes = try raw.readSome()
        if bytes.isEmpty { throw TestWebSocketError.endOfStream }
        guard let tls else {
            plaintext += bytes
            return
        }
        plaintext += try bytes.withUnsafeBytes { try tls.receivedCiphertext($0) }
        while let ciphertext = tls.takeCiphertext() { try raw.send(ciphertext) }
    }
}

enum TestWebSocketError: Error {
    case rejected(Int)
    case closed(WebSocketClosure)
    case endOfStream
}
