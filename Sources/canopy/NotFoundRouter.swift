import HTTP1
import HTTPServer

/// Answers 404 for every path the server's built-in endpoints do not handle; the gateway's
/// router (REST, server-sent events, `/.ws`) replaces it.
struct NotFoundRouter: Router {
    func route(_ request: HTTPRequest, context: RequestContext) -> Route {
        .respond(.error(.notFound, message: "no route for \(request.head.path)"))
    }
}
