import DataModel
import HTTP1

/// Shapes every answer to one REST request: the production headers (rest-api.md §2), CORS, and the `print` mode.
struct RESTReply: Sendable {
    /// `print=pretty`: indented JSON.
    let pretty: Bool
    /// `print=silent`: `204 No Content` for successful requests.
    let silent: Bool
    /// The `Access-Control-Allow-Origin` value, `nil` when the origin is not allowed.
    let allowedOrigin: String?

    init(parameters: QueryString, origin: String?, corsOrigins: [String]) {
        pretty = parameters["print"] == "pretty"
        silent = parameters["print"] == "silent"
        allowedOrigin = Self.allowedOrigin(origin, corsOrigins: corsOrigins)
    }

    /// An answer that grants no other origin (the admin surface: pages of other sites get no CORS grant).
    init(parameters: QueryString) {
        pretty = parameters["print"] == "pretty"
        silent = parameters["print"] == "silent"
        allowedOrigin = nil
    }

    /// `*` when every origin is allowed, else the request's origin when it is listed.
    static func allowedOrigin(_ origin: String?, corsOrigins: [String]) -> String? {
        guard !corsOrigins.isEmpty else { return "*" }
        guard let origin, corsOrigins.contains(origin) else { return nil }
        return origin
    }

    /// A successful answer carrying `json` (compact), with `extra` headers (`ETag`).
    func success(_ json: [UInt8], headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        if silent { return response(.noContent, body: [], extra: extra) }
        return response(.ok, body: pretty ? PrettyJSON.format(json) : json, extra: extra)
    }

    /// A successful `GET` answer: `json`, or with `callback=NAME` the JSONP script `NAME(json);`, and with
    /// `download=FILE` the header that makes a browser save it (rest-api.md §3).
    func read(_ json: [UInt8], headers extra: HTTPHeaders, callback: String?, download: String?) -> HTTPResponse {
        var extra = extra
        if let download {
            // By scalar, not by Character: a quote followed by a combining mark is one Character that is not `"`,
            // and would close the quoted file name (found by RESTPathQueryFuzz).
            let name = String(String.UnicodeScalarView(download.unicodeScalars.filter { scalar in
                scalar != "\"" && scalar != "\\" && !Character(scalar).isNewline
            }))
            extra.add(name: "Content-Disposition", value: "attachment; filename=\"\(name)\"")
        }
        guard let callback, !silent else { return success(json, headers: extra) }
        var body = Array(callback.utf8)
        body.append(UInt8(ascii: "("))
        body.append(contentsOf: pretty ? PrettyJSON.format(json) : json)
        body.append(contentsOf: ");".utf8)
        var response = self.response(.ok, body: body, extra: extra)
        response.headers.replaceOrAdd(name: "Content-Type", value: "application/javascript; charset=utf-8")
        return response
    }

    /// Whether `name` may be used as a JSONP callback: a dotted JavaScript name (`cb`, `app.onData`), so the script
    /// cannot carry anything else.
    static func isValidCallback(_ name: String) -> Bool {
        guard name.utf8.count <= 128 else { return false }
        let parts = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.allSatisfy { part in
            guard let first = part.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            return part.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"):
                    return true
                default:
                    return false
                }
            }
        }
    }

    /// An answer with `status` and `json` whatever the print mode (412 bodies, 304).
    func plain(_ status: HTTPStatus, _ json: [UInt8], headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        response(status, body: status.forbidsContent ? [] : (pretty ? PrettyJSON.format(json) : json), extra: extra)
    }

    /// An error answer, pretty-printed as production does.
    func failure(_ error: RESTError) -> HTTPResponse {
        var writer = JSONWriter(capacity: error.message.utf8.count + 16)
        writer.writeRaw(#"{"error":"#.utf8)
        writer.writeString(error.message)
        writer.writeRaw("}".utf8)
        let json = writer.bytes
        var extra: HTTPHeaders = [:]
        if error.status == .methodNotAllowed { extra.add(name: "Allow", value: Self.allowedMethods) }
        var body = PrettyJSON.format(json)
        body.append(UInt8(ascii: "\n"))
        return response(error.status, body: body, extra: extra)
    }

    /// The answer to a CORS preflight (`OPTIONS`).
    func preflight(requestedHeaders: String?) -> HTTPResponse {
        var extra: HTTPHeaders = [:]
        extra.add(name: "Access-Control-Allow-Methods", value: Self.allowedMethods)
        extra.add(name: "Access-Control-Allow-Headers",
                  value: requestedHeaders ?? "Authorization, Content-Type, X-Firebase-ETag, If-Match, If-None-Match")
        extra.add(name: "Access-Control-Max-Age", value: "3600")
        return response(.noContent, body: [], extra: extra)
    }

    /// The headers of every answer (also the head of an event stream).
    func commonHeaders(contentType: String = "application/json; charset=utf-8") -> HTTPHeaders {
        var headers: HTTPHeaders = [:]
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Cache-Control", value: "no-cache")
        if let allowedOrigin {
            headers.add(name: "Access-Control-Allow-Origin", value: allowedOrigin)
            if allowedOrigin != "*" { headers.add(name: "Vary", value: "Origin") }
        }
        return headers
    }

    private func response(_ status: HTTPStatus, body: [UInt8], extra: HTTPHeaders) -> HTTPResponse {
        var headers = commonHeaders()
        for field in extra { headers.add(name: field.name, value: field.value) }
        if allowedOrigin != nil && !extra.contains(name: "Access-Control-Allow-Methods") {
            headers.add(name: "Access-Control-Expose-Headers", value: "ETag")
        }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    static let allowedMethods = "GET, PUT, POST, PATCH, DELETE, OPTIONS"
}
