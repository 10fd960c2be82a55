import DataModel

/// A JWT in JWS compact serialization (RFC 7515 §7.1, RFC 7519 §7.2), split and decoded but not yet verified.
struct CompactJWS {
    /// The JOSE header, a JSON object.
    var header: JSONValue
    /// The claims set, a JSON object.
    var claims: JSONValue
    /// `BASE64URL(header) . BASE64URL(payload)`: the bytes the signature covers.
    var signingInput: ArraySlice<UInt8>
    /// The decoded signature; empty for the emulator's unsigned tokens.
    var signature: [UInt8]

    /// Deepest nesting accepted in the header (flat in practice).
    static let maxHeaderNesting = 4
    /// Deepest nesting accepted in the claims; custom claims may nest, Firebase limits them to 1000 bytes anyway.
    static let maxClaimsNesting = 16

    /// Splits and decodes `token`, or says why it is not a JWT.
    init(_ token: [UInt8]) throws(TokenRejection) {
        let periods = token.indices.filter { token[$0] == UInt8(ascii: ".") }
        guard periods.count == 2 else {
            throw TokenRejection("not a JWT: expected 3 dot-separated parts, found \(periods.count + 1)")
        }
        let headerSegment = token[..<periods[0]]
        let payloadSegment = token[(periods[0] + 1)..<periods[1]]
        let signatureSegment = token[(periods[1] + 1)...]

        header = try Self.decodeObject(headerSegment, part: "header", maxNesting: Self.maxHeaderNesting)
        claims = try Self.decodeObject(payloadSegment, part: "payload", maxNesting: Self.maxClaimsNesting)
        guard let signature = Base64URL.decode(signatureSegment) else {
            throw TokenRejection("the signature is not base64url")
        }
        self.signature = signature
        signingInput = token[..<periods[1]]
    }

    /// Decodes one base64url segment holding a JSON object.
    private static func decodeObject(
        _ segment: ArraySlice<UInt8>, part: String, maxNesting: Int
    ) throws(TokenRejection) -> JSONValue {
        guard let json = Base64URL.decode(segment) else { throw TokenRejection("the \(part) is not base64url") }
        let value: JSONValue
        do {
            value = try JSONReader.readValue(json, maxNesting: maxNesting)
        } catch {
            throw TokenRejection("the \(part) is not valid JSON (\(error.reason) at byte \(error.offset))")
        }
        guard case .object = value else { throw TokenRejection("the \(part) is not a JSON object") }
        return value
    }
}

/// Why a token is refused; becomes ``AuthOutcome/invalid(reason:)``.
struct TokenRejection: Error {
    /// For the server log; never contains the token or claim values.
    var reason: String
    /// Whether the token names a key that fetched keys lack, so a refresh of them might bring it.
    var unknownKey = false
    /// The `kid` the token named, when ``unknownKey``.
    var keyID: String?

    /// Creates a rejection.
    init(_ reason: String) {
        self.reason = reason
    }

    /// A token naming `keyID`, which the fetched keys lack.
    static func unknownKey(_ keyID: String?, _ reason: String) -> TokenRejection {
        var rejection = TokenRejection(reason)
        rejection.unknownKey = true
        rejection.keyID = keyID
        return rejection
    }
}
