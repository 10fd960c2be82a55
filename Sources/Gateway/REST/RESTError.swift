import HTTP1

/// A REST request that cannot be served, with Firebase's status and `error` text (rest-api.md §5).
struct RESTError: Error, Sendable {
    let status: HTTPStatus
    let message: String

    static func badRequest(_ message: String) -> RESTError { RESTError(status: .badRequest, message: message) }

    static let invalidPath = badRequest("Invalid path: Invalid token in path")
    static let unparsableValue = badRequest("Invalid data; couldn't parse JSON object, array, or value.")
    static let unparsableObject = badRequest(
        "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
    static let permissionDenied = RESTError(status: .unauthorized, message: "Permission denied")
    static let crossSiteAdmin = RESTError(
        status: .forbidden, message: "The admin credential is not accepted from another site's web page.")
    static let unparsableToken = RESTError(status: .unauthorized, message: "Could not parse auth token.")
    static let expiredToken = RESTError(status: .unauthorized, message: "Auth token is expired.")
    static let notREST = RESTError(
        status: .methodNotAllowed,
        message: "Invalid request: append .json to your request URI to use the REST API.")
    static let writeTooBig = badRequest(
        "WRITE_TOO_BIG: Data to write exceeds the maximum size that can be modified with a single request.")
    static let namespaceUnavailable = RESTError(
        status: .serviceUnavailable, message: "Service unavailable: the namespace could not be loaded")
    static let ifMatchUnsupported = badRequest("if-match is only supported for PUT and DELETE")
}
