import WebSocket
import WebSocketDeflate

/// The WebSocket upgrade every connection of a run sends (RFC 6455 §4.1), built once, and the check of the server's
/// answer: status, accept value, subprotocol (`mqtt`) and permessage-deflate (RFC 7692 §5).
struct UpgradeRequest: Sendable {
    /// Largest upgrade response accepted.
    static let maximumResponseBytes = 16 * 1024

    /// The request bytes.
    let bytes: [UInt8]
    private let handshake: WebSocketClientHandshake
    private let subprotocols: [String]
    private let offersDeflate: Bool

    init(configuration: BenchConfiguration, server: ServerURL) {
        // One fixed key for every connection: the accept check still proves the peer speaks WebSocket, and a load
        // test needs no per-connection secrecy.
        handshake = WebSocketClientHandshake(key: "Y2Fub3B5IGJlbmNoIGtleQ==")
        subprotocols = configuration.wireProtocol == .mqtt ? ["mqtt"] : []
        offersDeflate = configuration.deflate
        bytes = handshake.requestHead(
            host: server.hostHeader, target: configuration.upgradeTarget(server), subprotocols: subprotocols,
            extensions: configuration.deflate ? PerMessageDeflate.clientOffer() : nil)
    }

    /// The index just past the blank line that ends the response head, if it has arrived.
    static func headEnd(in bytes: [UInt8], searchingFrom start: Int) -> Int? {
        WebSocketClientHandshake.responseHeadEnd(in: bytes, searchingFrom: start)
    }

    /// Checks a complete response head and returns the permessage-deflate codec when one was agreed.
    func accept(head: ArraySlice<UInt8>) throws(UpgradeFailure) -> PerMessageDeflateCodec? {
        let outcome: (subprotocol: String?, extensions: [WebSocketExtensionOffer])
        do {
            outcome = try handshake.validateResponseHead(head, offeredSubprotocols: subprotocols)
        } catch .unexpectedStatus(let status) {
            throw UpgradeFailure("upgrade refused: status \(status)")
        } catch {
            throw UpgradeFailure("bad upgrade response: \(error)")
        }
        if let wanted = subprotocols.first, outcome.subprotocol != wanted {
            throw UpgradeFailure("the server did not agree to the \(wanted) subprotocol")
        }
        guard let offer = outcome.extensions.first else { return nil }
        guard offersDeflate, outcome.extensions.count == 1,
            let parameters = PerMessageDeflate.acceptResponse(offer)
        else {
            throw UpgradeFailure("the server answered with an extension not offered: \(offer.headerValue)")
        }
        return PerMessageDeflateCodec(role: .client, parameters: parameters)
    }
}

/// Why an upgrade failed.
struct UpgradeFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
