import DataModel
import JWTKit

/// Turns the entries of a JWKS (RFC 7517 §5) into RS256 and ES256 verification keys with jwt-kit.
///
/// Entries this server cannot use — other key types or curves, other algorithms, `use` other than `sig` — are
/// skipped with a note, so a provider's published key set works as is. Entries it should use but cannot (missing or
/// broken parameters, RSA keys under 2048 bits) and entries with private parameters are errors.
enum JWKSKeys {
    /// Parses the `keys` array of a JWKS read from `path`.
    static func parse(_ entries: [JSONValue], path: String) throws(AuthConfigurationError) -> KeyFileReader.Contents {
        var contents = KeyFileReader.Contents()
        for (index, entry) in entries.enumerated() {
            guard case .object = entry else {
                throw .invalidKey(path: path, key: "JWKS key \(index)", reason: "not a JSON object")
            }
            let keyID = entry["kid"]?.stringValue
            let source = "JWKS key \(index)" + (keyID.map { " (kid \"\($0)\")" } ?? "")
            if let kid = entry["kid"], keyID == nil {
                throw .invalidKey(path: path, key: source, reason: "\"kid\" is \(kid), not a string")
            }
            switch try material(of: entry, path: path, source: source) {
            case .usable(let material):
                contents.keys.append(ParsedKey(material: material, keyID: keyID, source: source))
            case .skipped(let why):
                contents.ignored.append("\(source) skipped: \(why)")
            }
        }
        return contents
    }

    /// What one entry yields.
    private enum Entry {
        /// A key to verify with.
        case usable(ParsedKey.Material)
        /// A well-formed key this server has no use for, and why.
        case skipped(String)
    }

    /// The key in one entry (an object).
    private static func material(
        of entry: JSONValue, path: String, source: String
    ) throws(AuthConfigurationError) -> Entry {
        let keyType = entry["kty"]?.stringValue ?? ""
        let algorithm = entry["alg"]?.stringValue
        if let use = entry["use"]?.stringValue, use != "sig" {
            return .skipped("\"use\" is \"\(use)\", not \"sig\"")
        }
        if entry["d"] != nil {
            throw .invalidKey(
                path: path, key: source,
                reason: "it holds a private key (\"d\"); the key file must hold public keys only")
        }
        switch keyType {
        case "RSA":
            guard algorithm == nil || algorithm == SignatureAlgorithm.rs256.rawValue else {
                return .skipped("algorithm \(algorithm ?? "") is not supported (RS256 and ES256 are)")
            }
            let modulus = try string("n", of: entry, path: path, source: source)
            let exponent = try string("e", of: entry, path: path, source: source)
            do {
                return .usable(.rsa(try Insecure.RSA.PublicKey(modulus: modulus, exponent: exponent)))
            } catch {
                throw .invalidKey(path: path, key: source, reason: "not an RSA key of at least 2048 bits (\(error))")
            }
        case "EC":
            let curve = entry["crv"]?.stringValue ?? ""
            guard curve == "P-256" else { return .skipped("curve \"\(curve)\" is not supported (P-256 is)") }
            guard algorithm == nil || algorithm == SignatureAlgorithm.es256.rawValue else {
                return .skipped("algorithm \(algorithm ?? "") is not supported with P-256 (ES256 is)")
            }
            let x = try string("x", of: entry, path: path, source: source)
            let y = try string("y", of: entry, path: path, source: source)
            do {
                return .usable(.ecdsa(try ES256PublicKey(parameters: (x: x, y: y))))
            } catch {
                throw .invalidKey(path: path, key: source, reason: "not a P-256 public key (\(error))")
            }
        default:
            return .skipped("key type \"\(keyType)\" is not supported (RSA and EC are)")
        }
    }

    /// The string member `name` of `entry`, or an error naming it.
    private static func string(
        _ name: String, of entry: JSONValue, path: String, source: String
    ) throws(AuthConfigurationError) -> String {
        guard let value = entry[name]?.stringValue, !value.isEmpty else {
            throw .invalidKey(path: path, key: source, reason: "\"\(name)\" is missing or not a non-empty string")
        }
        return value
    }
}
