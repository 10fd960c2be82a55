import Testing
import WebSocket

@Suite struct WebSocketExtensionOfferTests {
    @Test("parses several extensions with parameters, quoted values and odd spacing")
    func parsesList() {
        let offers = WebSocketExtensionOffer.parse(headerLines: [
            "permessage-deflate; client_max_window_bits, Permessage-Deflate ;Server_Max_Window_Bits = \"10\"",
            " , x-webkit-deflate-frame",
        ])
        #expect(
            offers == [
                WebSocketExtensionOffer(name: "permessage-deflate", parameters: [.init(name: "client_max_window_bits")]),
                WebSocketExtensionOffer(
                    name: "permessage-deflate", parameters: [.init(name: "server_max_window_bits", value: "10")]),
                WebSocketExtensionOffer(name: "x-webkit-deflate-frame"),
            ])
        #expect(offers[1].headerValue == "permessage-deflate; server_max_window_bits=10")
    }

    @Test(
        "a malformed line contributes no offers, other lines still count",
        arguments: [
            "permessage-deflate;", "permessage-deflate; =1", "a b", "x; p=\"unterminated", "x; p=\"not a token\"",
            "x; p=\"\"", "x; p=", "x,, y z", "\"quoted-name\"",
        ])
    func malformed(line: String) {
        #expect(WebSocketExtensionOffer.parse(headerLines: [line]).isEmpty)
        #expect(WebSocketExtensionOffer.parse(headerLines: [line, "ok"]).map(\.name) == ["ok"])
    }

    @Test("an escaped quoted value is unescaped")
    func escapedQuotedValue() {
        #expect(WebSocketExtensionOffer.parse(headerLines: ["x; p=\"a\\b\""]).first?.parameters.first?.value == "ab")
    }
}
