import Auth
import Testing

@Suite("Admin credential")
struct AdminCredentialTests {
    @Test("owner is the admin credential on a loopback-only server without an admin token")
    func ownerOnLoopback() throws {
        let verifier = try makeVerifier(AuthConfiguration(listensOnLoopbackOnly: true))
        #expect(verifier.verify("owner", now: now) == .admin)
        for near in ["Owner", "owner ", "owne", "ownerr", " owner"] {
            #expect(verifier.verify(near, now: now).isInvalid, "\(near)")
        }
    }

    @Test("owner means nothing on a server reachable from other addresses")
    func ownerElsewhere() throws {
        let verifier = try makeVerifier(AuthConfiguration(hs256Secret: testSecret, listensOnLoopbackOnly: false))
        #expect(verifier.verify("owner", now: now).isInvalid)
    }

    @Test("a configured admin token is the only admin credential, on any address", arguments: [false, true])
    func configuredToken(loopback: Bool) throws {
        let token = "canopy-admin-7c1f0e9a"
        let verifier = try makeVerifier(AuthConfiguration(adminToken: token, listensOnLoopbackOnly: loopback))
        #expect(verifier.verify(token, now: now) == .admin)
        #expect(verifier.verify("owner", now: now).isInvalid)
        for near in [String(token.dropLast()), token + "0", "canopy-admin-7c1f0e9b", token.uppercased()] {
            #expect(verifier.verify(near, now: now).isInvalid, "\(near)")
        }
    }

    @Test("an admin token shaped like a JWT is still matched exactly")
    func jwtShapedAdminToken() throws {
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln"
        let verifier = try makeVerifier(AuthConfiguration(adminToken: token))
        #expect(verifier.verify(token, now: now) == .admin)
    }

    @Test("an empty or oversized admin token is a configuration error")
    func badAdminToken() {
        #expect(configurationError(AuthConfiguration(adminToken: "")) == .invalidAdminToken(reason: "it is empty"))
        let huge = String(repeating: "a", count: TokenVerifier.maxCredentialBytes + 1)
        #expect(configurationError(AuthConfiguration(adminToken: huge)) == .invalidAdminToken(reason: "it is longer than 16384 bytes"))
    }
}
