// libFuzzer entry for the token and key readers (Sources/Auth); built by `scripts/fuzz JWTFuzz`, which compiles this
// file together with Sources/Primitives, Sources/DataModel and Sources/Auth as one module (so there are no project
// imports here) and links jwt-kit and swift-crypto from the debug build (not instrumented: no coverage feedback or
// AddressSanitizer checks inside them, but a crash there is still caught).
//
// Every input is
// - decoded as base64url, which must be canonical (re-encoding gives the input back) and invert encoding;
// - split as a compact JWS and, when it splits, its claims checked as those of a signed token;
// - verified as a credential by a verifier holding an HS256 secret and the RS256 and ES256 keys of a JWKS, with
//   unsigned tokens allowed (emulator mode), an audience and an issuer;
// - when it looks like a key file (JSON or PEM), read as one: split into PEM blocks in memory, then read from a file
//   and its keys registered with jwt-kit.
// Invariants: outcomes agree with the claims (uid = sub, at most 128 UTF-16 units, accepted until exp + skew, which
// is in the future, audience and issuer as configured, expired only for signed tokens); a refusal's reason never
// repeats the credential; verifying twice gives the same outcome; key-file errors name the file. Any crash,
// sanitizer report or broken invariant (trapping) is a finding.

#if canImport(Glibc)
import Glibc
#endif

/// The public keys of the verifier (generated for this target; the private halves signed the seed tokens).
private let jwks = #"{"keys":[{"kty":"RSA","alg":"RS256","use":"sig","kid":"rsa-1","n":"1rCMfDM-hjgxTplIfd71Z7YTmKl5VE5lGZ1n5897NpIbPwe_QPDZVdsw5WRtlqvoAkcxHp3703jOvnCg8BTHCkU7N3qjws3oEv3WHxM9Wb7Bej-xyT4RGbyBOKlE3wmoK7Z3BPG_Dq00VfVJrvem6Lfne4Gw_iTg1O32r9pnisp3rAf8AcReM2QiLoiFpD8p8vfSliOXF2IUWxci6NmJ7cEVYPSXoQr_EqWkd4yw38mSfdkuOn6IcKereMNNGwFoMb2I-VwKt1sxYV4Pt3YhjiUqqOIro9aKFP502ACAiPJ2qWWbGK9J84q6hN-tPrH8xWY2DPia2lFlWze7cp3qLQ","e":"AQAB"},{"kty":"EC","crv":"P-256","alg":"ES256","kid":"ec-1","x":"KIV8B7LTQskxbbbCxCp5vPO6KEPHOjz1JNawmd8FxEc","y":"gM2G_TGaJP3p1srREGdgxbJpn7ivyjgMzT2CYuUmLBk"}]}"#

private let now = 1_750_000_000.0
private let skew = 5.0
private let audience = "demo"
private let issuer = "https://securetoken.google.com/demo"

/// A file under /tmp holding `bytes`, removed after `body` ran.
private func withTemporaryFile<Result>(_ bytes: [UInt8], _ body: (String) -> Result) -> Result {
    var template = Array("/tmp/canopy-jwtfuzz-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    precondition(descriptor >= 0, "mkstemp failed")
    let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    close(descriptor)
    precondition(written == bytes.count, "writing the temporary file failed")
    defer { unlink(path) }
    return body(path)
}

private let verifier: TokenVerifier = withTemporaryFile(Array(jwks.utf8)) { path in
    let configuration = AuthConfiguration(
        hs256Secret: "0123456789abcdef0123456789abcdef", publicKeysPath: path, audience: audience, issuer: issuer,
        listensOnLoopbackOnly: true, allowUnsignedTokens: true, clockSkewSeconds: skew)
    do {
        let verifier = try TokenVerifier(configuration: configuration)
        precondition(verifier.loadedKeys.count == 3, "the fuzz verifier did not load its three keys")
        return verifier
    } catch {
        fatalError("the fuzz verifier's configuration is refused: \(error)")
    }
}

/// Unpadded base64url.
private func base64URLEncoded(_ bytes: [UInt8]) -> [UInt8] {
    Base64.encode(bytes).utf8.compactMap { byte in
        switch byte {
        case UInt8(ascii: "+"): return UInt8(ascii: "-")
        case UInt8(ascii: "/"): return UInt8(ascii: "_")
        case UInt8(ascii: "="): return nil
        default: return byte
        }
    }
}

private func checkBase64URL(_ input: [UInt8]) {
    if let decoded = Base64URL.decode(input[...]) {
        precondition(base64URLEncoded(decoded) == input, "base64url accepted a non-canonical encoding")
    }
    precondition(Base64URL.decode(base64URLEncoded(input)[...]) == input, "base64url does not invert encoding")
}

/// The checks an accepted identity must have passed.
private func checkIdentity(_ identity: AuthIdentity, claims: JSONValue, signed: Bool) {
    precondition(claims["sub"] == .string(identity.uid), "uid is not the sub claim")
    precondition(!identity.uid.isEmpty && identity.uid.utf16.count <= TokenVerifier.maxSubjectLength, "a bad uid")
    precondition(identity.claims == claims, "the identity's claims are not the token's")
    guard signed else { return }
    guard let expiresAt = identity.expiresAt, let acceptedUntil = identity.acceptedUntil else {
        preconditionFailure("a signed token accepted without exp")
    }
    precondition(acceptedUntil == expiresAt + skew && acceptedUntil > now, "an expired token accepted")
    let audiences: [JSONValue] = if case .array(let many)? = claims["aud"] { many } else { [claims["aud"] ?? .null] }
    precondition(audiences.contains(.string(audience)), "a token for another audience accepted")
    precondition(claims["iss"] == .string(issuer), "a token from another issuer accepted")
    guard case .number(let issuedAt)? = claims["iat"] else {
        preconditionFailure("a signed token accepted without iat")
    }
    precondition(issuedAt <= now + skew, "a token issued in the future accepted")
}

private func checkToken(_ input: [UInt8]) {
    let token = try? CompactJWS(input)
    if let token {
        guard case .object = token.header, case .object = token.claims else {
            preconditionFailure("a JWS header or payload that is not an object")
        }
        precondition(input.starts(with: token.signingInput), "the signing input is not the start of the token")
        if case .user(let identity)? = try? verifier.identity(from: token.claims, signed: true, now: now) {
            checkIdentity(identity, claims: token.claims, signed: true)
        }
    }
    let credential = String(decoding: input, as: UTF8.self)
    let outcome = verifier.verify(credential, now: now)
    precondition(verifier.verify(credential, now: now) == outcome, "verifying twice disagrees")
    switch outcome {
    case .admin:
        precondition(credential == AuthConfiguration.emulatorOwnerCredential, "admin for another credential")
    case .user(let identity):
        guard let token else { preconditionFailure("a user for a credential that is not a JWS") }
        checkIdentity(identity, claims: token.claims, signed: token.header["alg"] != .string("none"))
    case .expired:
        precondition(token.map { $0.header["alg"] != .string("none") } ?? false, "expired for an unsigned token")
    case .invalid(let reason):
        precondition(input.count < 24 || !reason.contains(credential), "a refusal repeats the credential")
    }
}

/// Key files: PEM blocks split in memory; the whole file read from disk, its keys registered with jwt-kit.
private func checkKeyFile(_ input: [UInt8]) {
    let text = input.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }
    let isJSON = text.first == UInt8(ascii: "{")
    if let blocks = try? PEMKeys.splitBlocks(input, path: "fuzz.pem") {
        for block in blocks {
            let text = Array(block.text.utf8)
            let begin = Array("-----BEGIN \(block.label)-----".utf8)
            let end = Array("-----END \(block.label)-----\n".utf8)
            precondition(text.starts(with: begin), "a block without its BEGIN line")
            precondition(text.count >= end.count && text.suffix(end.count) == end[...], "a block without its END line")
        }
    } else if !isJSON {
        return
    }
    withTemporaryFile(input) { path in
        do throws(AuthConfigurationError) {
            let contents = try KeyFileReader.read(path: path)
            precondition(!contents.keys.isEmpty, "a key file read without keys")
            _ = try KeyRegistration.register(contents.keys)
        } catch {
            switch error {
            case .unreadableKeyFile, .keyFileTooLarge, .unrecognizedKeyFile, .invalidKey, .noUsableKeys:
                precondition(error.description.contains(path), "a key-file error that does not name the file")
            default:
                break
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func jwtFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    checkBase64URL(input)
    checkToken(input)
    checkKeyFile(input)
    return 0
}
