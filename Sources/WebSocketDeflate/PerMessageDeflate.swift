import WebSocket

/// Entry points for permessage-deflate (RFC 7692): negotiation on both sides and stateless compression for fan-out.
public enum PerMessageDeflate {
    /// The extension token.
    public static let extensionName = "permessage-deflate"

    // MARK: - Server side

    /// Picks the first acceptable `permessage-deflate` offer (RFC 7692 §5.1) and returns the agreed parameters, or
    /// `nil` if there is none; offers with invalid parameters are declined (§7.1) and the next one is tried.
    public static func negotiate(
        offers: [WebSocketExtensionOffer], configuration: PerMessageDeflateConfiguration = .init()
    ) -> PerMessageDeflateParameters? {
        for offer in offers {
            guard let requested = PerMessageDeflateParameters.parse(offer) else { continue }
            var agreed = PerMessageDeflateParameters()
            agreed.serverNoContextTakeover = requested.serverNoContextTakeover || configuration.serverNoContextTakeover
            agreed.clientNoContextTakeover = configuration.clientNoContextTakeover
            agreed.serverMaxWindowBits = min(requested.serverMaxWindowBits ?? 15, configuration.serverMaxWindowBits)
            if let clientBits = requested.clientMaxWindowBits {
                // The client can limit its window: ask for ours, never more than it offered.
                agreed.clientMaxWindowBits = min(clientBits ?? 15, configuration.clientMaxWindowBits)
            }
            return agreed
        }
        return nil
    }

    /// A hook for ``WebSocket/WebSocketHandshakeConfiguration/negotiateExtensions`` that negotiates
    /// permessage-deflate and creates a server codec for each accepted connection.
    public static func serverNegotiation(
        configuration: PerMessageDeflateConfiguration = .init()
    ) -> @Sendable ([WebSocketExtensionOffer]) -> WebSocketExtensionAcceptance? {
        { offers in
            guard let parameters = negotiate(offers: offers, configuration: configuration) else { return nil }
            return WebSocketExtensionAcceptance(
                responseHeaderValue: parameters.responseHeaderValue,
                codec: PerMessageDeflateCodec(role: .server, parameters: parameters, configuration: configuration))
        }
    }

    // MARK: - Client side

    /// The `Sec-WebSocket-Extensions` offer a client sends: always `client_max_window_bits` (we can limit our
    /// window), plus the flags and server window the configuration asks for.
    public static func clientOffer(configuration: PerMessageDeflateConfiguration = .init()) -> String {
        var value = extensionName
        if configuration.serverNoContextTakeover { value += "; server_no_context_takeover" }
        if configuration.clientNoContextTakeover { value += "; client_no_context_takeover" }
        if configuration.serverMaxWindowBits < 15 {
            value += "; server_max_window_bits=\(configuration.serverMaxWindowBits)"
        }
        value += "; client_max_window_bits"
        return value
    }

    /// Checks a server's response to ``clientOffer(configuration:)`` (RFC 7692 §5.1, §7.1) and returns the agreed
    /// parameters, or `nil` if the client must fail the connection: unknown or repeated parameters, invalid values,
    /// a server window larger than requested, or `client_max_window_bits` without a value.
    public static func acceptResponse(
        _ response: WebSocketExtensionOffer, configuration: PerMessageDeflateConfiguration = .init()
    ) -> PerMessageDeflateParameters? {
        guard let answered = PerMessageDeflateParameters.parse(response) else { return nil }
        var agreed = PerMessageDeflateParameters()
        // A server may ignore our server_no_context_takeover request (§7.1.1.1); then it takes over its context.
        agreed.serverNoContextTakeover = answered.serverNoContextTakeover
        // We honour the server's request, and also skip takeover if we offered to.
        agreed.clientNoContextTakeover = answered.clientNoContextTakeover || configuration.clientNoContextTakeover
        if let serverBits = answered.serverMaxWindowBits {
            guard serverBits <= configuration.serverMaxWindowBits else { return nil }
            agreed.serverMaxWindowBits = serverBits
        } else if configuration.serverMaxWindowBits < 15 {
            return nil  // §7.1.2.1: a server accepting our server_max_window_bits must echo it
        }
        switch answered.clientMaxWindowBits {
        case .none:
            agreed.clientMaxWindowBits = configuration.clientMaxWindowBits
        case .some(.none):
            return nil  // a response must give a value (§7.1.2.2)
        case .some(.some(let bits)):
            agreed.clientMaxWindowBits = min(bits, configuration.clientMaxWindowBits)
        }
        return agreed
    }

    // MARK: - Fan-out

    /// Compresses one message without any history, returning the frame payload (with RSV1 to be set on the frame),
    /// or `nil` to send it uncompressed: below the threshold, not smaller when compressed, or zlib failed.
    ///
    /// With `server_no_context_takeover` in effect (``PerMessageDeflateCodec/sharedCompressionWindowBits`` is not
    /// `nil`), a message compresses to the same bytes for every connection with the same window, so a broadcast is
    /// compressed once and framed once (``WebSocket/WebSocketFrameEncoder/encodeChunk(opcode:payload:fin:rsv1:)``
    /// with `rsv1: true`) for all of them. This convenience sets up a zlib stream per call; a queue that broadcasts
    /// often can keep a ``PerMessageDeflateSharedCompressor`` instead.
    public static func compressOnce(
        _ payload: UnsafeRawBufferPointer, windowBits: Int = 15, configuration: PerMessageDeflateConfiguration = .init()
    ) -> [UInt8]? {
        let compressor = PerMessageDeflateSharedCompressor(windowBits: windowBits, configuration: configuration)
        return compressor.compress(payload)
    }
}
