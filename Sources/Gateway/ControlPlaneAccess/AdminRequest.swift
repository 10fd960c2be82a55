import HTTP1

/// A request to an admin endpoint that carries the admin credential (``Gateway/admitAdmin(_:)``): what it asks for,
/// and its answers shaped as every REST answer is (the `print` mode), granting no other origin (no CORS headers).
public struct AdminRequest: Sendable {
    /// The method, after a `POST` override (`X-HTTP-Method-Override`).
    public let method: String
    /// The namespace `ns=` (or the Host) names; the default one without either.
    public let namespace: String
    let reply: RESTReply

    /// A successful answer carrying `json` (`204` with `print=silent`).
    public func success(_ json: [UInt8]) -> HTTPResponse {
        reply.success(json)
    }

    /// An answer with `status` and `json`, whatever the print mode.
    public func plain(_ status: HTTPStatus, _ json: [UInt8]) -> HTTPResponse {
        reply.plain(status, json)
    }

    /// An error answer: `{"error": message}`.
    public func failure(_ status: HTTPStatus, message: String) -> HTTPResponse {
        reply.failure(RESTError(status: status, message: message))
    }

    /// `405`: the endpoint does not take this method.
    public var methodNotAllowed: HTTPResponse {
        failure(.methodNotAllowed, message: "Method not allowed: \(method.prefix(32))")
    }

    /// The headers of an answer of `contentType` (the head of an event stream).
    public func headers(contentType: String) -> HTTPHeaders {
        reply.commonHeaders(contentType: contentType)
    }
}

/// What ``Gateway/admitAdmin(_:)`` decided about a request to an admin endpoint.
public enum AdminAdmission: Sendable {
    /// The request carries the admin credential: serve it.
    case admitted(AdminRequest)
    /// The request is answered already: a CORS preflight, or a refusal (401 without the admin credential, 403 from
    /// another site's web page).
    case answered(HTTPResponse)
}
