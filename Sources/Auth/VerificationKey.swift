import JWTKit

/// The JWS algorithms a ``TokenVerifier`` can check (RFC 7518 §3.1), by their `alg` header value.
enum SignatureAlgorithm: String, Sendable, CaseIterable {
    /// HMAC with SHA-256, keyed by the configured secret.
    case hs256 = "HS256"
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA with P-256 and SHA-256.
    case es256 = "ES256"
}

/// A key as read from the configuration, before jwt-kit has turned it into a verifier.
struct ParsedKey: Sendable {
    /// The key material in jwt-kit's types.
    enum Material: Sendable {
        /// The HS256 secret.
        case hmac(HMACKey)
        /// An RSA public key (at least 2048 bits; jwt-kit refuses smaller ones).
        case rsa(Insecure.RSA.PublicKey)
        /// A P-256 public key.
        case ecdsa(ES256PublicKey)
    }

    /// The key material.
    var material: Material
    /// The key id (`kid`) from a JWKS or certificate map; `nil` for the secret and PEM keys.
    var keyID: String?
    /// Where the key came from, for messages (`HS256 secret`, `PEM block 2 (CERTIFICATE)`, `JWKS key 0`).
    var source: String

    /// The only algorithm this key verifies.
    var algorithm: SignatureAlgorithm {
        switch material {
        case .hmac: return .hs256
        case .rsa: return .rs256
        case .ecdsa: return .es256
        }
    }
}

/// A key ready to check signatures synchronously: jwt-kit's algorithm object for it, plus how tokens select it.
struct VerificationKey: Sendable {
    /// The algorithm tokens must name in `alg` to be checked with this key.
    var algorithm: SignatureAlgorithm
    /// The key id tokens may name in `kid`; `nil` for keys without one.
    var keyID: String?
    /// Where the key came from.
    var source: String
    /// jwt-kit's signer; its `verify(_:signs:)` is synchronous and thread-safe (immutable `Sendable` value).
    var verifier: any JWTAlgorithm

    /// Whether `signature` is a valid signature of `signingInput` under this key; errors count as "no".
    func accepts(signature: [UInt8], of signingInput: ArraySlice<UInt8>) -> Bool {
        do {
            return try verifier.verify(signature, signs: signingInput)
        } catch {
            return false
        }
    }
}

/// A description of one loaded verification key, for the start-up log.
public struct VerificationKeyDescription: Sendable, Equatable, CustomStringConvertible {
    /// The `alg` it verifies: `HS256`, `RS256` or `ES256`.
    public var algorithm: String
    /// Its key id, if it has one.
    public var keyID: String?
    /// Where it came from (`HS256 secret`, `PEM block 1 (PUBLIC KEY)`, `JWKS key 0`, `certificate map entry`).
    public var source: String

    /// `RS256 key "abc" from JWKS key 0`.
    public var description: String {
        let name = keyID.map { " \"\($0)\"" } ?? ""
        return "\(algorithm) key\(name) from \(source)"
    }
}
