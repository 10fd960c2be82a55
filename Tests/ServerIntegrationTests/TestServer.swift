import HTTP1
import HTTPServer
import Logging
import Transport

/// Starts the real server in-process on an ephemeral port for one test and stops it afterwards.
final class TestServer: @unchecked Sendable {  // immutable after init; the server is thread-safe to stop
    let server: HTTPServer
    let port: UInt16
    let tlsPort: UInt16?

    init(configure: (inout ServerConfiguration) -> Void = { _ in }, router: any Router = TestRouter()) throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.eventLoops = 2
        configuration.echoPath = "/echo"
        configuration.broadcastPath = "/broadcast"
        configure(&configuration)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        server = HTTPServer(configuration: configuration, router: router, logger: logger)
        let addresses = try server.start()
        port = addresses[0].port
        tlsPort = addresses.count > 1 ? addresses[1].port : nil
    }

    func stop() { server.shutdown() }
}

/// Routes used by the tests: `/body` answers with the request body, `/get-only` allows GET only.
struct TestRouter: Router {
    func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        switch request.head.path {
        case "/body":
            return .respond(HTTPResponse(status: .ok, headers: HTTPHeaders(), body: request.body))
        case "/get-only":
            guard request.head.method == "GET" else {
                return .respond(.error(.methodNotAllowed, message: "only GET"))
            }
            return .respond(.json(status: .ok, body: Array("{}".utf8)))
        default:
            return .respond(.error(.notFound, message: "not found"))
        }
    }
}
