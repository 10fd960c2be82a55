import Auth
@testable import ControlPlane
import Gateway
import HTTP1
@testable import HTTPServer
import Logging
import Testing

/// A control plane in front of an in-memory gateway (loopback only, so the emulator's `owner` is the admin
/// credential), routed without sockets.
private struct Routed {
    let gateway: Gateway
    let controlPlane: ControlPlane

    init(console: StaticAssets? = nil) throws {
        gateway = Gateway(
            configuration: GatewayConfiguration(),
            tokenVerifier: try TokenVerifier(configuration: AuthConfiguration(listensOnLoopbackOnly: true)),
            logger: Logger(label: "test"))
        controlPlane = ControlPlane(gateway: gateway, consoleAssets: console, logger: Logger(label: "test"))
    }

    /// The immediate answer to `method target` (`nil` when the route is not an immediate answer).
    func respond(_ method: String, _ target: String, admin: Bool = true, body: String = "") -> HTTPResponse? {
        var headers = HTTPHeaders()
        if admin { headers.add(name: "Authorization", value: "Bearer owner") }
        let request = HTTPRequest(head: HTTPRequestHead(method: method, target: target, headers: headers),
                                  body: Array(body.utf8))
        guard case .respond(let response) = controlPlane.route(
            request, context: RequestContext(remoteAddress: "127.0.0.1", isSecure: false))
        else { return nil }
        return response
    }
}

private func text(_ response: HTTPResponse?) -> String {
    String(decoding: response?.body ?? [], as: UTF8.self)
}

@Suite("ControlPlane: the admin endpoints and the console in front of the gateway")
struct ControlPlaneRoutingTests {
    @Test("an admin endpoint without the admin credential is refused by the gateway's admission")
    func refusedWithoutAdmin() throws {
        let routed = try Routed()
        let response = routed.respond("GET", "/.settings/rules.json", admin: false)
        #expect(response?.status == .unauthorized)
        #expect(text(response).contains("Permission denied"))
        #expect(response?.headers["Access-Control-Allow-Origin"] == nil)
    }

    @Test("without rules, the rules in force are the open ones")
    func openRules() throws {
        let routed = try Routed()
        #expect(text(routed.respond("GET", "/.settings/rules.json")) == #"{"rules":{".read":true,".write":true}}"#)
    }

    @Test("uploaded rules are put in force; rules that do not load answer 400 with their diagnostics")
    func uploadRules() throws {
        let routed = try Routed()
        let rules = #"{"rules":{".read":"auth != null"}}"#
        #expect(text(routed.respond("PUT", "/.settings/rules.json", body: rules)) == #"{"status":"ok"}"#)
        #expect(text(routed.respond("GET", "/.settings/rules.json")) == rules)
        let broken = routed.respond("PUT", "/.settings/rules.json", body: #"{"rules":{".read":"auth !="}}"#)
        #expect(broken?.status == .badRequest)
        #expect(text(broken).contains(#""diagnostics":[{"line":1"#))
        #expect(text(routed.respond("GET", "/.settings/rules.json")) == rules)
        let invalidNamespace = routed.respond("PUT", "/.settings/rules.json?ns=no.dots", body: rules)
        #expect(invalidNamespace?.status == .badRequest)
        #expect(text(invalidNamespace).contains("invalid namespace"))
    }

    @Test("the rules' coverage lists each rule expression of the namespace's rules")
    func coverage() throws {
        let routed = try Routed()
        _ = routed.respond("PUT", "/.settings/rules.json?ns=other", body: #"{"rules":{".write":false}}"#)
        let coverage = text(routed.respond("GET", "/.inspect/coverage.json?ns=other"))
        #expect(coverage.hasPrefix(#"[{"path":"/.write","kind":".write","expression":"false""#))
        #expect(text(routed.respond("GET", "/.inspect/coverage.json")) == "[]")
    }

    @Test("the open namespaces are listed; the figures start empty")
    func inspect() throws {
        let routed = try Routed()
        try routed.gateway.openDefaultNamespace()
        #expect(text(routed.respond("GET", "/.inspect/databases.json")) == #"[{"name":"default"}]"#)
        #expect(text(routed.respond("GET", "/.inspect/figures.json")) == #"{"intervalSeconds":1,"samples":[]}"#)
    }

    @Test("a method an admin endpoint does not take is 405")
    func methodNotAllowed() throws {
        let response = try Routed().respond("DELETE", "/.inspect/databases.json")
        #expect(response?.status == .methodNotAllowed)
        #expect(text(response).contains("Method not allowed: DELETE"))
    }

    @Test("the console is served from its files, and is 404 without them")
    func console() throws {
        let files = StaticAssets(files: [(path: "index.html", bytes: Array("<p>console</p>".utf8))])
        let routed = try Routed(console: files)
        #expect(routed.respond("GET", "/.console", admin: false)?.headers["Location"] == "/.console/")
        #expect(text(routed.respond("GET", "/.console/", admin: false)) == "<p>console</p>")
        #expect(try Routed().respond("GET", "/.console/", admin: false)?.status == .notFound)
    }

    @Test("every other request reaches the gateway")
    func dataPlane() throws {
        let routed = try Routed()
        let metrics = routed.respond("GET", "/.metrics", admin: false)
        #expect(metrics?.status == .ok)
        #expect(text(metrics).contains("canopy_wire_sessions"))
        #expect(routed.respond("GET", "/x", admin: false)?.status == .methodNotAllowed)
    }
}
