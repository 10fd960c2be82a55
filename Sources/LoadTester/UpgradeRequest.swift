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
        var index = max(0, start)
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    /// Checks a complete response head and returns the permessage-deflate codec when one was agreed.
    func accept(head: ArraySlice<UInt8>) throws(UpgradeFailure) -> PerMessageDeflateCodec? {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: true)
        guard !lines.isEmpty else { throw UpgradeFailure("empty upgrade response") }
        let statusLine = lines.removeFirst()
        let statusFields = statusLine.split(separator: " ", maxSplits: 2)
        guard statusFields.count >= 2, statusFields[0].hasPrefix("HTTP/1."), let status = Int(statusFields[1]) else {
            throw UpgradeFailure("not an HTTP response: \(statusLine.prefix(80))")
        }
        guard status == 101 else { throw UpgradeFailure("upgrade refused: \(statusLine.prefix(80))") }
        var fields: [(name: Substring, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw UpgradeFailure("malformed header line") }
            fields.append((line[..<colon], String(line[line.index(after: colon)...])))
        }
        let outcome: (subprotocol: String?, extensions: [WebSocketExtensionOffer])
        do {
            outcome = try handshake.validateResponse(
                statusCode: status,
                headerValues: { name in
                    fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
                },
                offeredSubprotocols: subprotocols)
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
