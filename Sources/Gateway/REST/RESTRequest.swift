import Auth
import DataModel
import HTTP1
import Primitives

/// A REST request, parsed: method, location and parameters (rest-api.md §1–§3).
struct RESTRequest: Sendable {
    /// The REST methods.
    enum Method: String, Sendable {
        case get = "GET", put = "PUT", post = "POST", patch = "PATCH", delete = "DELETE"
    }

    let method: Method
    /// The addressed location.
    let path: Path
    /// Whether the URL addresses the location's priority (`/x/.priority.json`).
    let addressesPriority: Bool
    let parameters: QueryString
    let head: HTTPRequestHead
    let body: [UInt8]

    /// Parses `request`; `nil` when its path is not a REST URL (no `.json` suffix).
    ///
    /// - Throws: ``RESTError`` for an invalid path or an unknown method.
    init?(_ request: HTTPRequest, parameters: QueryString) throws(RESTError) {
        guard let (path, priority) = try Self.location(request.head.path) else { return nil }
        let name = Self.effectiveMethod(request.head, parameters: parameters)
        guard let method = Method(rawValue: name) else {
            throw RESTError(status: .methodNotAllowed, message: "Method not allowed: \(name.prefix(32))")
        }
        self.method = method
        self.path = path
        self.addressesPriority = priority
        self.parameters = parameters
        self.head = request.head
        self.body = request.body
    }

    /// The method, after a `POST` override (`X-HTTP-Method-Override` header or `x-http-method-override`).
    static func effectiveMethod(_ head: HTTPRequestHead, parameters: QueryString) -> String {
        guard head.method == "POST",
              let override = head.headers["X-HTTP-Method-Override"] ?? parameters["x-http-method-override"]
        else { return head.method }
        return override.uppercased()
    }

    /// The location of a `/<path>.json` URL path: percent-decoded segments, empty ones skipped, a final
    /// `.priority` addressing the priority; `nil` without the `.json` suffix.
    static func location(_ urlPath: String) throws(RESTError) -> (Path, Bool)? {
        guard urlPath.hasSuffix(".json") else { return nil }
        let bytes = Array(urlPath.utf8.dropLast(5))
        var keys: [Key] = []
        var priority = false
        for segment in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            guard !priority else { throw .invalidPath }
            let text = PercentDecoding.decode(segment)
            if text == ".priority" {
                priority = true
                continue
            }
            guard let key = try? Key(text) else { throw .invalidPath }
            keys.append(key)
        }
        guard keys.count <= DataLimits.default.maxDepth else { throw .invalidPath }
        guard !(priority && keys.isEmpty) else { throw .invalidPath }
        return (Path(keys: keys), priority)
    }

    /// The namespace: `ns=`, else the first label of a `<ns>.<domain>` host that is not an IP address, else
    /// `defaultName` (rest-api.md §1).
    static func namespaceName(parameters: QueryString, host: String?, defaultName: String) -> String {
        if let name = parameters["ns"], !name.isEmpty { return name }
        guard let host, !host.hasPrefix("[") else { return defaultName }
        let name = host.utf8.prefix { $0 != UInt8(ascii: ":") }
        guard let dot = name.firstIndex(of: UInt8(ascii: ".")), dot != name.startIndex,
              !name.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") })
        else { return defaultName }
        return String(Substring(name[..<dot]))
    }

    /// The credential: `auth=`, `access_token=` or `Authorization: Bearer`.
    static func credential(_ head: HTTPRequestHead, parameters: QueryString) -> String? {
        if let token = parameters["auth"] ?? parameters["access_token"] { return token }
        guard let header = head.headers["Authorization"] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingSpaces
    }

    /// Who is asking, from the credential (rest-api.md §6); the admin may name the rules' `auth` with
    /// `auth_variable_override`. `refused` hears why a token was refused (for the log).
    static func identity(
        _ head: HTTPRequestHead, parameters: QueryString, verifier: TokenVerifier, now: Double,
        refused: (String) -> Void = { _ in }
    ) -> Result<ConnectionIdentity, RESTError> {
        guard let credential = credential(head, parameters: parameters) else { return .success(.unauthenticated) }
        let outcome = verifier.verify(credential, now: now)
        switch outcome {
        case .expired:
            refused("the token expired (exp)")
            return .failure(.expiredToken)
        case .invalid(let reason):
            refused(reason)
            return .failure(.unparsableToken)
        case .user(let user): return .success(.user(user))
        case .admin:
            guard !CrossSiteRequest.isCrossSite(head) else { return .failure(.crossSiteAdmin) }
            guard let override = parameters["auth_variable_override"] else { return .success(.admin) }
            guard let variable = try? JSONReader.readValue(Array(override.utf8)) else {
                return .failure(.badRequest("auth_variable_override must be a JSON object or null"))
            }
            switch variable {
            case .null: return .success(.override(nil))
            case .object: return .success(.override(variable))
            default: return .failure(.badRequest("auth_variable_override must be a JSON object or null"))
            }
        }
    }
}

extension String {
    /// The text without leading and trailing spaces.
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
