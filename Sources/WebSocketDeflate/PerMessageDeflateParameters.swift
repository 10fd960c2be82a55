import WebSocket

/// The agreed parameters of a permessage-deflate session (RFC 7692 §7.1), from either side's point of view.
///
/// "Server" parameters govern server-to-client messages (the server compresses, the client inflates); "client"
/// parameters govern client-to-server messages.
public struct PerMessageDeflateParameters: Sendable, Hashable {
    /// The server resets its compressor after each message (§7.1.1.1).
    public var serverNoContextTakeover: Bool
    /// The client resets its compressor after each message (§7.1.1.2).
    public var clientNoContextTakeover: Bool
    /// Largest LZ77 window the server's compressor may use, as a power of two (8...15, §7.1.2.1).
    public var serverMaxWindowBits: Int
    /// Largest LZ77 window the client's compressor may use, as a power of two (8...15, §7.1.2.2).
    public var clientMaxWindowBits: Int

    /// Creates parameters; the defaults are the RFC's (context takeover allowed, 32 KiB windows).
    public init(
        serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false, serverMaxWindowBits: Int = 15,
        clientMaxWindowBits: Int = 15
    ) {
        precondition((8...15).contains(serverMaxWindowBits) && (8...15).contains(clientMaxWindowBits))
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// The `Sec-WebSocket-Extensions` response value a server sends for these parameters, with window sizes only
    /// when below the default 15.
    ///
    /// `client_max_window_bits` may only appear if the client's offer contained it (§7.1.2.2); negotiation ensures
    /// ``clientMaxWindowBits`` stays 15 otherwise.
    public var responseHeaderValue: String {
        var value = PerMessageDeflate.extensionName
        if serverNoContextTakeover { value += "; server_no_context_takeover" }
        if clientNoContextTakeover { value += "; client_no_context_takeover" }
        if serverMaxWindowBits < 15 { value += "; server_max_window_bits=\(serverMaxWindowBits)" }
        if clientMaxWindowBits < 15 { value += "; client_max_window_bits=\(clientMaxWindowBits)" }
        return value
    }

    /// The parameters of one `permessage-deflate` header element, or `nil` if RFC 7692 §7.1 requires declining it:
    /// an unknown parameter, a repeated one, a value on a flag, or a window size that is not a decimal 8...15 without
    /// leading zeros.
    ///
    /// Returns the raw values: `clientMaxWindowBits` is `nil` when absent and `.some(nil)` when present without a
    /// value (a client saying "I can limit my window").
    static func parse(
        _ element: WebSocketExtensionOffer
    ) -> (serverNoContextTakeover: Bool, clientNoContextTakeover: Bool, serverMaxWindowBits: Int?,
        clientMaxWindowBits: Int??)?
    {
        guard element.name == PerMessageDeflate.extensionName else { return nil }
        var seen = Set<String>()
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaxWindowBits: Int?
        var clientMaxWindowBits: Int??
        for parameter in element.parameters {
            guard seen.insert(parameter.name).inserted else { return nil }
            switch parameter.name {
            case "server_no_context_takeover":
                guard parameter.value == nil else { return nil }
                serverNoContextTakeover = true
            case "client_no_context_takeover":
                guard parameter.value == nil else { return nil }
                clientNoContextTakeover = true
            case "server_max_window_bits":
                guard let value = parameter.value, let bits = windowBits(value) else { return nil }
                serverMaxWindowBits = bits
            case "client_max_window_bits":
                if let value = parameter.value {
                    guard let bits = windowBits(value) else { return nil }
                    clientMaxWindowBits = .some(bits)
                } else {
                    clientMaxWindowBits = .some(nil)
                }
            default:
                return nil
            }
        }
        return (serverNoContextTakeover, clientNoContextTakeover, serverMaxWindowBits, clientMaxWindowBits)
    }

    /// A window-bits value: decimal 8...15, no leading zeros (§7.1.2.1).
    private static func windowBits(_ text: String) -> Int? {
        guard let first = text.utf8.first, first != UInt8(ascii: "0"), text.utf8.count <= 2,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let value = Int(text), (8...15).contains(value)
        else { return nil }
        return value
    }
}
