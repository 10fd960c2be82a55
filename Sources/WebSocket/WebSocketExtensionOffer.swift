/// One element of a `Sec-WebSocket-Extensions` header: an extension name with its parameters (RFC 6455 §9.1).
///
/// The same shape describes a client's offer and a server's response. Names are lowercased (tokens compare
/// case-insensitively); quoted-string values are unescaped, and §9.1 requires the unescaped value to be a token.
public struct WebSocketExtensionOffer: Sendable, Hashable {
    /// One `name[=value]` parameter; `value` is `nil` when the parameter has no value.
    public struct Parameter: Sendable, Hashable {
        /// Lowercased parameter name.
        public var name: String
        /// The value, unquoted, or `nil` for a bare parameter.
        public var value: String?

        /// Creates a parameter.
        public init(name: String, value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// Lowercased extension name, e.g. `permessage-deflate`.
    public var name: String
    /// Parameters in header order (duplicates kept, so an extension can decline offers that repeat one).
    public var parameters: [Parameter]

    /// Creates an offer.
    public init(name: String, parameters: [Parameter] = []) {
        self.name = name
        self.parameters = parameters
    }

    /// The header-element spelling, e.g. `permessage-deflate; client_max_window_bits=10`.
    public var headerValue: String {
        var text = name
        for parameter in parameters {
            text += "; " + parameter.name
            if let value = parameter.value { text += "=" + value }
        }
        return text
    }

    /// Parses every line of a `Sec-WebSocket-Extensions` header, in order.
    ///
    /// A line that does not follow the §9.1 grammar contributes no offers (it is declined as a whole) rather than
    /// failing the handshake: extensions are optional, and the connection works without them.
    public static func parse(headerLines: [String]) -> [WebSocketExtensionOffer] {
        headerLines.flatMap { line in
            var parser = ExtensionHeaderParser(Array(line.utf8))
            return parser.parseList() ?? []
        }
    }
}

/// A recursive-descent parser for one `Sec-WebSocket-Extensions` line (RFC 6455 §9.1, RFC 9110 §5.6).
private struct ExtensionHeaderParser {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// `1#extension`, allowing empty list elements; `nil` on any syntax error.
    mutating func parseList() -> [WebSocketExtensionOffer]? {
        var offers: [WebSocketExtensionOffer] = []
        while true {
            skipWhitespace()
            if atEnd { return offers }
            if peek == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard let offer = parseExtension() else { return nil }
            offers.append(offer)
            skipWhitespace()
            if atEnd { return offers }
            guard peek == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }

    /// `extension-token *( ";" extension-param )`.
    private mutating func parseExtension() -> WebSocketExtensionOffer? {
        guard let name = parseToken() else { return nil }
        var parameters: [WebSocketExtensionOffer.Parameter] = []
        while true {
            skipWhitespace()
            guard !atEnd, peek == UInt8(ascii: ";") else { break }
            index += 1
            skipWhitespace()
            guard let parameterName = parseToken() else { return nil }
            skipWhitespace()
            var value: String?
            if !atEnd, peek == UInt8(ascii: "=") {
                index += 1
                skipWhitespace()
                guard !atEnd, let parsed = peek == UInt8(ascii: "\"") ? parseQuotedToken() : parseToken() else {
                    return nil
                }
                value = parsed
            }
            parameters.append(.init(name: HTTPFieldList.lowercasedASCII(parameterName), value: value))
        }
        return WebSocketExtensionOffer(name: HTTPFieldList.lowercasedASCII(name), parameters: parameters)
    }

    private mutating func parseToken() -> String? {
        let start = index
        while !atEnd, Self.isTokenCharacter(bytes[index]) { index += 1 }
        guard index > start else { return nil }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A quoted-string whose unescaped content must itself be a token (§9.1).
    private mutating func parseQuotedToken() -> String? {
        index += 1  // opening quote
        var content: [UInt8] = []
        while !atEnd {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard !content.isEmpty, content.allSatisfy(Self.isTokenCharacter) else { return nil }
                return String(decoding: content, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard !atEnd else { return nil }
                content.append(bytes[index])
                index += 1
            default:
                content.append(byte)
            }
        }
        return nil  // unterminated
    }

    private mutating func skipWhitespace() {
        while !atEnd, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
    }

    private var atEnd: Bool { index >= bytes.count }
    private var peek: UInt8 { bytes[index] }

    /// `tchar` of RFC 9110 §5.6.2.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
            UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
            UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
