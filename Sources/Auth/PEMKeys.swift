import JWTKit

/// Splits PEM text into its blocks (RFC 7468) and turns each into an RS256 or ES256 verification key with jwt-kit.
///
/// Accepted blocks: `PUBLIC KEY` (SubjectPublicKeyInfo), `RSA PUBLIC KEY` (PKCS #1) and `CERTIFICATE` (the key of an
/// X.509 certificate; its validity dates are not checked, as Firebase's own verifiers do not). Text between blocks is
/// ignored, as OpenSSL does. A private key block is an error: the server only needs public keys, and a private key in
/// its configuration is a leak waiting to happen.
enum PEMKeys {
    /// Parses every block of `bytes`.
    ///
    /// - Parameters:
    ///   - keyID: the `kid` to give every key (from a certificate map), or `nil`.
    ///   - path: the key file, for messages.
    ///   - sourcePrefix: prepended to each key's source description.
    static func parse(
        _ bytes: [UInt8], keyID: String?, path: String, sourcePrefix: String
    ) throws(AuthConfigurationError) -> [ParsedKey] {
        let blocks = try splitBlocks(bytes, path: path)
        var keys: [ParsedKey] = []
        for (index, block) in blocks.enumerated() {
            let source = "\(sourcePrefix)PEM block \(index + 1) (\(block.label))"
            let material = try material(of: block, path: path, source: source)
            keys.append(ParsedKey(material: material, keyID: keyID, source: source))
        }
        return keys
    }

    /// One `-----BEGIN label-----` … `-----END label-----` block, markers included.
    struct Block {
        /// The label between `BEGIN ` and the closing dashes.
        var label: String
        /// The whole block as text, as jwt-kit's PEM initialisers expect it.
        var text: String
    }

    /// Finds every block; unmatched `BEGIN` markers are errors.
    static func splitBlocks(_ bytes: [UInt8], path: String) throws(AuthConfigurationError) -> [Block] {
        let beginMarker = Array("-----BEGIN ".utf8)
        let dashes = Array("-----".utf8)
        var blocks: [Block] = []
        var cursor = 0
        while let begin = firstIndex(of: beginMarker, in: bytes, from: cursor) {
            let labelStart = begin + beginMarker.count
            guard let labelEnd = firstIndex(of: dashes, in: bytes, from: labelStart),
                !bytes[labelStart..<labelEnd].contains(UInt8(ascii: "\n"))
            else {
                throw .unrecognizedKeyFile(path: path, reason: "a PEM BEGIN line is not closed by five dashes")
            }
            let label = String(decoding: bytes[labelStart..<labelEnd], as: UTF8.self)
            let endMarker = Array("-----END \(label)-----".utf8)
            guard let end = firstIndex(of: endMarker, in: bytes, from: labelEnd + dashes.count) else {
                let reason = "PEM block \(blocks.count + 1) (\(label)) has no END line"
                throw .unrecognizedKeyFile(path: path, reason: reason)
            }
            cursor = end + endMarker.count
            blocks.append(Block(label: label, text: String(decoding: bytes[begin..<cursor], as: UTF8.self) + "\n"))
        }
        guard !blocks.isEmpty else { throw .unrecognizedKeyFile(
                path: path, reason: "neither JSON (a JWKS or a certificate map) nor PEM: no -----BEGIN line found") }
        return blocks
    }

    /// The key in one block.
    private static func material(
        of block: Block, path: String, source: String
    ) throws(AuthConfigurationError) -> ParsedKey.Material {
        let rsaFailure: any Error
        let ecdsaFailure: any Error
        switch block.label {
        case "PUBLIC KEY", "RSA PUBLIC KEY":
            do { return .rsa(try Insecure.RSA.PublicKey(pem: block.text)) } catch { rsaFailure = error }
            do { return .ecdsa(try ES256PublicKey(pem: block.text)) } catch { ecdsaFailure = error }
        case "CERTIFICATE":
            do { return .rsa(try Insecure.RSA.PublicKey(certificatePEM: block.text)) } catch { rsaFailure = error }
            do { return .ecdsa(try ES256PublicKey(certificate: block.text)) } catch { ecdsaFailure = error }
        default:
            let reason =
                block.label.hasSuffix("PRIVATE KEY")
                ? "it is a private key; the key file must hold public keys or certificates only"
                : "unsupported PEM block type (expected PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE)"
            throw .invalidKey(path: path, key: source, reason: reason)
        }
        throw .invalidKey(
            path: path, key: source,
            reason: "neither an RSA key of at least 2048 bits (\(rsaFailure)) nor a P-256 key (\(ecdsaFailure))")
    }

    /// The first index at or after `start` where `pattern` occurs in `bytes`.
    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !pattern.isEmpty, start <= bytes.count - pattern.count else { return nil }
        for index in start...(bytes.count - pattern.count)
        where bytes[index] == pattern[0] && bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
            return index
        }
        return nil
    }
}
