import Gateway
import HTTP1
import HTTPServer
import Logging

/// The control plane: the admin endpoints (`/.settings/*`, `/.inspect/*`) and the web console (`/.console/`), in
/// front of the data plane.
///
/// It is the HTTP server's router: it answers its own paths and hands every other request to the ``Gateway``,
/// whose public control-plane access (``Gateway/admitAdmin(_:)``, the namespaces, connections, figures and rule
/// evaluations) is all it uses. Call ``start()`` once the gateway reports the server's figures, ``stop()`` at
/// shutdown.
public final class ControlPlane: Router {
    /// The data plane.
    let gateway: Gateway
    /// The web console's files, served at `/.console/` (`nil`: no console).
    public let consoleAssets: StaticAssets?
    let logger: Logger
    /// The last minutes' figures, for the console's charts.
    let figures = FiguresHistory()

    /// A control plane in front of `gateway`, serving the console from `consoleAssets`.
    public init(gateway: Gateway, consoleAssets: StaticAssets?, logger: Logger) {
        self.gateway = gateway
        self.consoleAssets = consoleAssets
        self.logger = logger
    }

    public func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        Self.routes.route(request, context: context, owner: self) ?? gateway.route(request, context: context)
    }

    /// Starts sampling the gateway's figures every second, for `/.inspect/figures.json`.
    public func start() {
        figures.start(gateway)
    }

    /// Stops sampling.
    public func stop() {
        figures.stop()
    }

    /// The admin endpoints and the console.
    private static let routes: RouteTable<ControlPlane> = {
        var table = RouteTable<ControlPlane>()
        for path in adminPaths {
            table.add(.exact(path)) { controlPlane, request, _ in controlPlane.adminRoute(request) }
        }
        table.add(.exact("/.console"), methods: ["GET"]) { _, _, _ in
            .respond(HTTPResponse(status: .movedPermanently, headers: ["Location": "/.console/"]))
        }
        table.add(.prefix("/.console/"), methods: ["GET"]) { controlPlane, request, _ in
            guard let assets = controlPlane.consoleAssets else {
                return .respond(.error(.notFound, message: "The console is not served: disabled, or no files at start."))
            }
            let file = request.head.path.dropFirst("/.console/".count)
            return .respond(assets.response(for: file.isEmpty ? "index.html" : String(file), request: request.head))
        }
        return table
    }()
}
