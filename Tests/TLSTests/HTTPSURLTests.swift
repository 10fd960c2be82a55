import TLS
import Testing

@Suite("HTTPSURL")
struct HTTPSURLTests {
    @Test("https URLs: host, port, target")
    func parses() throws {
        let google = try #require(HTTPSURL(
            "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"))
        #expect(google.host == "www.googleapis.com" && google.port == 443)
        #expect(google.target == "/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com")
        let local = try #require(HTTPSURL("HTTPS://127.0.0.1:8443?x=1#fragment"))
        #expect(local.host == "127.0.0.1" && local.port == 8443 && local.target == "/?x=1")
        #expect(local.hostHeader == "127.0.0.1:8443")
        let v6 = try #require(HTTPSURL("https://[::1]:9/jwks"))
        #expect(v6.host == "::1" && v6.port == 9 && v6.hostHeader == "[::1]:9")
    }

    @Test("anything else is refused", arguments: [
        "http://example.com/", "https://", "https://user@example.com/", "https://example.com:0/",
        "https://example.com:65536/", "https://example.com:x/", "https://[::1/", "https://exa mple.com/", "ftp://a/",
    ])
    func refuses(url: String) {
        #expect(HTTPSURL(url) == nil)
    }

    @Test("redirect locations: absolute https URLs and paths on the same host")
    func redirects() throws {
        let base = try #require(HTTPSURL("https://keys.example.test:8443/a"))
        #expect(base.resolving("/b?c")?.description == "https://keys.example.test:8443/b?c")
        #expect(base.resolving("https://other.example.test/x")?.host == "other.example.test")
        #expect(base.resolving("http://other.example.test/x") == nil)
        #expect(base.resolving("//other.example.test/x") == nil)
    }
}
