import Testing
import WebSocket
import WebSocketDeflate

@Suite struct PerMessageDeflateNegotiationTests {
    private func negotiate(
        _ header: String, configuration: PerMessageDeflateConfiguration = .init()
    ) -> PerMessageDeflateParameters? {
        PerMessageDeflate.negotiate(
            offers: WebSocketExtensionOffer.parse(headerLines: [header]), configuration: configuration)
    }

    /// The RFC's defaults: the server keeps its context unless configured otherwise.
    private let permissive = PerMessageDeflateConfiguration(serverNoContextTakeover: false, clientNoContextTakeover: false)

    @Test(
        "negotiates the response for each offer",
        arguments: [
            ("permessage-deflate", "permessage-deflate"),
            ("permessage-deflate; server_no_context_takeover", "permessage-deflate; server_no_context_takeover"),
            ("permessage-deflate; client_no_context_takeover", "permessage-deflate"),
            ("permessage-deflate; server_max_window_bits=10", "permessage-deflate; server_max_window_bits=10"),
            ("permessage-deflate; client_max_window_bits", "permessage-deflate"),
            ("permessage-deflate; client_max_window_bits=12", "permessage-deflate; client_max_window_bits=12"),
            ("permessage-deflate; client_max_window_bits=\"9\"", "permessage-deflate; client_max_window_bits=9"),
            ("permessage-deflate; server_max_window_bits=8", "permessage-deflate; server_max_window_bits=8"),
            ("x-foo, permessage-deflate; server_max_window_bits=15", "permessage-deflate"),
        ])
    func negotiatesWithPermissiveConfiguration(offer: String, response: String) {
        #expect(negotiate(offer, configuration: permissive)?.responseHeaderValue == response)
    }

    @Test("the default configuration adds both no-context-takeover flags unasked")
    func defaultConfiguration() {
        #expect(
            negotiate("permessage-deflate; client_max_window_bits")?.responseHeaderValue
                == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
    }

    @Test("configured windows cap what is agreed; client_max_window_bits only when offered")
    func configuredWindows() {
        let small = PerMessageDeflateConfiguration(
            serverNoContextTakeover: false, clientNoContextTakeover: false, serverMaxWindowBits: 10,
            clientMaxWindowBits: 11)
        #expect(negotiate("permessage-deflate", configuration: small)?.responseHeaderValue
            == "permessage-deflate; server_max_window_bits=10")
        #expect(negotiate("permessage-deflate; client_max_window_bits; server_max_window_bits=12", configuration: small)?
            .responseHeaderValue == "permessage-deflate; server_max_window_bits=10; client_max_window_bits=11")
        #expect(negotiate("permessage-deflate; client_max_window_bits=9", configuration: small)?.clientMaxWindowBits == 9)
        #expect(negotiate("permessage-deflate; server_max_window_bits=9", configuration: small)?.serverMaxWindowBits == 9)
    }

    @Test(
        "an offer with invalid parameters is declined and the next one is taken",
        arguments: [
            "permessage-deflate; foo", "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; server_no_context_takeover=1", "permessage-deflate; client_no_context_takeover=true",
            "permessage-deflate; server_max_window_bits", "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits=16", "permessage-deflate; server_max_window_bits=08",
            "permessage-deflate; client_max_window_bits=0", "permessage-deflate; client_max_window_bits=abc",
            "permessage-deflate; client_max_window_bits=1a",
        ])
    func declinesInvalidOffers(offer: String) {
        #expect(negotiate(offer, configuration: permissive) == nil)
        let next = negotiate(offer + ", permessage-deflate; server_max_window_bits=11", configuration: permissive)
        #expect(next?.responseHeaderValue == "permessage-deflate; server_max_window_bits=11")
    }

    @Test("offers of other extensions are ignored")
    func otherExtensions() {
        #expect(negotiate("x-webkit-deflate-frame") == nil)
        #expect(PerMessageDeflate.negotiate(offers: []) == nil)
    }

    @Test("the server hook creates a codec with the agreed parameters")
    func serverHook() throws {
        let hook = PerMessageDeflate.serverNegotiation()
        let acceptance = try #require(hook(WebSocketExtensionOffer.parse(headerLines: ["permessage-deflate"])))
        #expect(acceptance.responseHeaderValue == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        let codec = try #require(acceptance.codec as? PerMessageDeflateCodec)
        #expect(codec.parameters == PerMessageDeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true))
        #expect(hook(WebSocketExtensionOffer.parse(headerLines: ["x-other"])) == nil)
    }

    // MARK: - Client side

    @Test("the client offer reflects the configuration")
    func clientOffer() {
        #expect(
            PerMessageDeflate.clientOffer()
                == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; client_max_window_bits")
        #expect(
            PerMessageDeflate.clientOffer(configuration: .init(serverNoContextTakeover: false, clientNoContextTakeover: false, serverMaxWindowBits: 10))
                == "permessage-deflate; server_max_window_bits=10; client_max_window_bits")
    }

    @Test("the client accepts valid responses and refuses invalid ones")
    func clientAcceptsResponse() {
        func accept(_ header: String, _ configuration: PerMessageDeflateConfiguration = .init()) -> PerMessageDeflateParameters? {
            guard let element = WebSocketExtensionOffer.parse(headerLines: [header]).first else { return nil }
            return PerMessageDeflate.acceptResponse(element, configuration: configuration)
        }
        #expect(accept("permessage-deflate") == PerMessageDeflateParameters(clientNoContextTakeover: true))
        #expect(
            accept("permessage-deflate; server_no_context_takeover; client_max_window_bits=10")
                == PerMessageDeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true, clientMaxWindowBits: 10))
        #expect(accept("permessage-deflate; client_max_window_bits") == nil)
        #expect(accept("permessage-deflate; mystery") == nil)
        #expect(accept("permessage-deflate; server_no_context_takeover; server_no_context_takeover") == nil)
        let requestsSmallServerWindow = PerMessageDeflateConfiguration(serverMaxWindowBits: 10)
        #expect(accept("permessage-deflate; server_max_window_bits=10", requestsSmallServerWindow)?.serverMaxWindowBits == 10)
        #expect(accept("permessage-deflate; server_max_window_bits=12", requestsSmallServerWindow) == nil)
        #expect(accept("permessage-deflate", requestsSmallServerWindow) == nil)
    }
}
