// libFuzzer entry for the REST API's URL parsing (Sources/Gateway/REST); built by `scripts/fuzz RESTPathQueryFuzz`,
// which compiles this file together with Sources/Primitives, DataModel, HTTP1 and Auth, the Gateway files that parse
// a REST URL (QueryString, RESTRequest, RESTReadShape, RESTError, RESTReply, PrettyJSON, ConnectionIdentity,
// CrossSiteRequest) and jwt-kit from the debug build, as one module (so there are no project imports here).
//
// Each input is a request target (`/path.json?query`) and the input's size picks the method. The path goes through
// `RESTRequest.location` (keys, `.priority`), the query through `QueryString`, `RESTReadShape` (orderBy, bounds,
// limits, shallow), `RESTReply` (print, callback, download) and the credential and identity lookup (auth,
// auth_variable_override). The fuzz-only parameters `host`, `origin`, `site`, `authorization` and `override` supply
// the header values those read, `message` an error text. Invariants: a location re-encoded as a URL reads back equal;
// a query's wire object reads back as the same query; error answers and pretty-printed JSON are valid JSON that reads
// back equal; a download header has no quote, backslash or line break of its own (but see the known finding below).
// Any crash, sanitizer report or broken invariant (reported by trapping) is a finding.

/// A verifier that accepts the emulator's owner credential and unsigned tokens, and HS256 tokens with a fixed secret.
private let verifier: TokenVerifier = {
    let configuration = AuthConfiguration(
        hs256Secret: "0123456789abcdef0123456789abcdef", listensOnLoopbackOnly: true, allowUnsignedTokens: true)
    do {
        return try TokenVerifier(configuration: configuration)
    } catch {
        fatalError("the fuzz verifier's configuration is refused: \(error)")
    }
}()

private let methods = ["GET", "PUT", "POST", "PATCH", "DELETE", "OPTIONS"]

/// `key` with every byte outside RFC 3986's unreserved set percent-encoded.
private func percentEncoded(_ key: String) -> String {
    var text = ""
    for byte in key.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
            text.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            text += "%" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return text
}

/// The location of `urlPath`: it must re-encode as a URL path that reads back equal.
private func checkLocation(_ urlPath: String) {
    let location: (Path, Bool)?
    do {
        location = try RESTRequest.location(urlPath)
    } catch {
        precondition(error.status == .badRequest, "a path error that is not 400")
        return
    }
    guard let (path, priority) = location else {
        precondition(!urlPath.hasSuffix(".json"), "a .json path read as no REST path")
        return
    }
    precondition(path.depth <= DataLimits.default.maxDepth, "a path deeper than the limit")
    precondition(!priority || !path.isRoot, "the root's priority addressed")
    let encoded = path.keys.map { "/" + percentEncoded($0.string) }.joined() + (priority ? "/.priority" : "") + ".json"
    guard let again = try? RESTRequest.location(encoded) else {
        preconditionFailure("the re-encoded location \(encoded) does not read back")
    }
    precondition(again.0 == path && again.1 == priority, "the re-encoded location reads back different")
}

/// The read shape of `parameters`: a query's wire object reads back as the same query.
private func checkShape(_ parameters: QueryString) {
    let shape: RESTReadShape
    do {
        shape = try RESTReadShape(parameters)
    } catch {
        precondition(error.status == .badRequest, "a query error that is not 400")
        return
    }
    switch shape {
    case .full:
        break
    case .shallow(let limit, _):
        precondition(limit.map { $0 > 0 && $0 <= Int(Int32.max) } ?? true, "a shallow limit out of range")
    case .query(let query):
        guard let again = try? QueryParams(wireObject: query.wireObject) else {
            preconditionFailure("a query's wire object does not read back")
        }
        precondition(again == query, "a query's wire object reads back different")
        precondition(query.limit.map { $0 > 0 } ?? true, "a query limit that is not positive")
    }
}

/// Answers shaped by `parameters`: error bodies are JSON naming the message; pretty JSON reads back equal; the
/// download header stays one quoted file name.
private func checkReply(_ parameters: QueryString, message: String) {
    let reply = RESTReply(parameters: parameters, origin: parameters["origin"], corsOrigins: ["https://app.example"])
    precondition(!(reply.pretty && reply.silent), "print is both pretty and silent")
    let failure = reply.failure(.badRequest(message))
    guard let body = try? JSONReader.readValue(failure.body), body["error"] == .string(message) else {
        preconditionFailure("an error answer is not JSON naming its message")
    }
    if let override = parameters["auth_variable_override"],
       let value = try? JSONReader.readValue(Array(override.utf8), maxNesting: 16)
    {
        var writer = JSONWriter()
        writer.write(value)
        let pretty = PrettyJSON.format(writer.bytes)
        precondition((try? JSONReader.readValue(pretty, maxNesting: 16)) == value, "pretty JSON reads back different")
    }
    let callback = parameters["callback"].flatMap { RESTReply.isValidCallback($0) ? $0 : nil }
    let answer = reply.read(Array("{\"a\":1}".utf8), headers: [:], callback: callback, download: parameters["download"])
    if let disposition = answer.headers["Content-Disposition"], parameters["download"] != nil {
        let bytes = Array(disposition.utf8)
        precondition(
            !bytes.contains(UInt8(ascii: "\r")) && !bytes.contains(UInt8(ascii: "\n")), "a line break in a header")
        // A quote or backslash sharing a grapheme with a combining mark once survived (found here, fixed).
        precondition(bytes.filter({ $0 == UInt8(ascii: "\"") }).count == 2, "a file name breaks out of its quotes")
        precondition(!bytes.contains(UInt8(ascii: "\\")), "a backslash in a quoted file name")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func restPathQueryFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let target = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let probe = HTTPRequestHead(method: "GET", target: target)
    let parameters = QueryString(probe.query)
    var headers: HTTPHeaders = [:]
    for (parameter, header) in [("host", "Host"), ("origin", "Origin"), ("site", "Sec-Fetch-Site"),
                                ("authorization", "Authorization"), ("override", "X-HTTP-Method-Override")] {
        if let value = parameters[parameter] { headers.add(name: header, value: value) }
    }
    let head = HTTPRequestHead(method: methods[size % methods.count], target: target, headers: headers)

    checkLocation(head.path)
    do {
        if let request = try RESTRequest(HTTPRequest(head: head), parameters: parameters) {
            precondition(request.path == (try? RESTRequest.location(head.path))?.0, "init and location disagree")
        }
    } catch {
        precondition(error.status == .methodNotAllowed || error.status == .badRequest, "an unexpected init error")
    }
    checkShape(parameters)
    checkReply(parameters, message: parameters["message"] ?? head.path)
    _ = RESTRequest.namespaceName(parameters: parameters, host: headers["Host"], defaultName: "default")
    _ = CrossSiteRequest.isCrossSite(head)
    if case .success(.override(let variable?)) = RESTRequest.identity(
        head, parameters: parameters, verifier: verifier, now: 1_700_000_000)
    {
        guard case .object = variable else {
            preconditionFailure("an auth override that is neither an object nor null")
        }
    }
    return 0
}
