import DataModel

/// One allow/deny case of a ``RulesTestSuite``.
public struct RulesTestCase: Sendable {
    /// What the case does.
    public enum Operation: Sendable {
        /// A read, with an optional query.
        case read(QueryParams?)
        /// A set (also push, transaction commit; an empty value deletes).
        case set(WriteValue)
        /// A set of the location's priority (a `path` ending in `/.priority`).
        case setPriority(WriteValue)
        /// A multi-location update: entries relative to the path.
        case update([UpdateEntry])
    }

    /// The case's name (or `case N`).
    public var name: String
    /// The location.
    public var path: Path
    /// The operation.
    public var operation: Operation
    /// `auth`, `nil` when unauthenticated.
    public var auth: JSONValue?
    /// The data before the operation.
    public var data: Node
    /// `now` in milliseconds.
    public var now: Double
    /// Whether the rules should allow the operation.
    public var expectAllowed: Bool

    /// Creates a case.
    public init(
        name: String, path: Path, operation: Operation, auth: JSONValue?, data: Node, now: Double, expectAllowed: Bool
    ) {
        self.name = name
        self.path = path
        self.operation = operation
        self.auth = auth
        self.data = data
        self.now = now
        self.expectAllowed = expectAllowed
    }

    init(parsing value: JSONValue, index: Int, defaults: RulesTestSuite.CaseDefaults) throws(RulesTestSuiteError) {
        guard case .object = value else { throw RulesTestSuiteError(message: "case \(index): must be an object") }
        let name = value["name"]?.stringValue ?? "case \(index)"
        func failure(_ message: String) -> RulesTestSuiteError {
            RulesTestSuiteError(message: "case \(index) (\(name)): \(message)")
        }
        guard let pathText = value["path"]?.stringValue, let target = try? WriteTarget(parsing: pathText) else {
            throw failure("\"path\" must be a valid path string")
        }
        let path: Path
        let addressesPriority: Bool
        switch target {
        case .node(let node): (path, addressesPriority) = (node, false)
        case .priority(of: let node): (path, addressesPriority) = (node, true)
        }
        let expectAllowed: Bool
        switch value["expected"] {
        case .string("allow")?, .bool(true)?: expectAllowed = true
        case .string("deny")?, .bool(false)?: expectAllowed = false
        case nil where !defaults.expectationsRequired: expectAllowed = false
        default: throw failure("\"expected\" must be \"allow\" or \"deny\"")
        }
        let operation: Operation
        switch value["operation"]?.stringValue {
        case "read":
            operation = .read(try Self.query(value["query"], failure))
        case "set":
            guard let written = value["value"] else { throw failure("a set needs a \"value\" (null to delete)") }
            do {
                let data = try JSONReader.readData(Array(written.description.utf8), depth: path.depth)
                operation = addressesPriority ? .setPriority(data) : .set(data)
            } catch {
                throw failure("\"value\" is not valid Firebase data: \(error)")
            }
        case "update":
            guard let written = value["value"], case .object = written else {
                throw failure("an update needs a \"value\" object")
            }
            guard !addressesPriority else { throw failure("an update's path cannot end in .priority") }
            do {
                operation = .update(try JSONReader.readUpdate(Array(written.description.utf8), depth: path.depth))
            } catch {
                throw failure("\"value\" is not a valid update: \(error)")
            }
        default:
            throw failure("\"operation\" must be \"read\", \"set\" or \"update\"")
        }
        var data = defaults.data
        if let override = value["data"] { data = try RulesTestSuite.readData(override, context: "case \(index) data") }
        var auth = defaults.auth
        if let override = value["auth"] { auth = override }
        if case .null? = auth { auth = nil }
        let now = try RulesTestSuite.readNow(value["now"], context: "case \(index) now") ?? defaults.now
        self.init(name: name, path: path, operation: operation, auth: auth, data: data, now: now, expectAllowed: expectAllowed)
    }

    /// A query in the friendly form (`orderBy`, `startAt`, …) or as a wire `q` object.
    private static func query(_ value: JSONValue?, _ failure: (String) -> RulesTestSuiteError) throws(RulesTestSuiteError)
        -> QueryParams?
    {
        guard let value else { return nil }
        guard case .object(let members) = value else { throw failure("\"query\" must be an object") }
        let friendly = ["orderBy", "startAt", "endAt", "equalTo", "limitToFirst", "limitToLast"]
        var wire = value
        if members.contains(where: { friendly.contains($0.key) }) {
            var converted: [(key: String, value: JSONValue)] = []
            for (key, member) in members {
                switch key {
                case "orderBy":
                    guard case .string(let order) = member else { throw failure("\"orderBy\" must be a string") }
                    let index = ["$key": ".key", "$value": ".value", "$priority": ".priority"][order] ?? order
                    converted.append(("i", .string(index)))
                case "startAt": converted.append(("sp", member))
                case "endAt": converted.append(("ep", member))
                case "equalTo":
                    converted.append(("sp", member))
                    converted.append(("ep", member))
                case "limitToFirst":
                    converted.append(("l", member))
                    converted.append(("vf", .string("l")))
                case "limitToLast":
                    converted.append(("l", member))
                    converted.append(("vf", .string("r")))
                default:
                    throw failure("unknown query member \"\(key)\"")
                }
            }
            wire = .object(converted)
        }
        do {
            return try QueryParams(wireObject: wire)
        } catch {
            throw failure("invalid query: \(error)")
        }
    }
}
