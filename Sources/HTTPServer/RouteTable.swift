import HTTP1

/// Routes by method and path: exact paths and path prefixes, tried in the order they were added; the first that
/// matches decides. `HEAD` is routed as `GET` by the server (``HTTPServer``), which then sends no body. Handlers
/// get the table's `Owner` (the router that owns it) with each request, so a table can be built before its owner.
public struct RouteTable<Owner>: Sendable {
    /// How an entry matches a request's path.
    public enum PathMatch: Sendable {
        /// The path is exactly this.
        case exact(String)
        /// The path starts with this.
        case prefix(String)

        func matches(_ path: String) -> Bool {
            switch self {
            case .exact(let exact): return path == exact
            case .prefix(let prefix): return path.hasPrefix(prefix)
            }
        }
    }

    /// Decides a matched request's route (on the connection's loop; must not block).
    public typealias Handler = @Sendable (Owner, HTTPRequest, RequestContext) -> Route

    private var entries: [(methods: Set<String>?, path: PathMatch, handler: Handler)] = []
    /// The bytes every entry's path starts with: a path without them matches none, which one comparison tells
    /// (every request the REST API gets passes the tables in front of it).
    private var commonPrefix: [UInt8]?

    /// An empty table.
    public init() {}

    /// Adds an entry for requests with one of `methods` (`nil`: any method) whose path matches `path`.
    public mutating func add(_ path: PathMatch, methods: Set<String>? = nil, _ handler: @escaping Handler) {
        entries.append((methods, path, handler))
        let text: String
        switch path {
        case .exact(let exact): text = exact
        case .prefix(let prefix): text = prefix
        }
        let bytes = Array(text.utf8)
        guard let known = commonPrefix else {
            commonPrefix = bytes
            return
        }
        commonPrefix = Array(zip(known, bytes).prefix { $0 == $1 }.map(\.0))
    }

    /// The route of the first entry that matches `request`, `nil` when none does. Behind requests still owed
    /// answers, a matching request is routed again once they are answered: handlers are never pipelined.
    public func route(_ request: HTTPRequest, context: RequestContext, owner: Owner) -> Route? {
        let path = request.head.path
        guard let commonPrefix, path.utf8.starts(with: commonPrefix) else { return nil }
        for entry in entries where entry.path.matches(path) {
            if let methods = entry.methods, !methods.contains(request.head.method) { continue }
            guard context.unansweredAhead == nil else { return .routeWhenAnswered }
            return entry.handler(owner, request, context)
        }
        return nil
    }
}
