import DataModel

/// A list of allow/deny cases for a rules file, in the JSON format shared by `swift test` fixtures and
/// `canopy rules test FILE CASES.json`.
///
/// ```json
/// {
///   "description": "what the cases cover",
///   "rules": { "rules": { … } },            // optional: the rules, when the file carries its own (or their text)
///   "data": { … }, "auth": { … }, "now": 1700000000000,   // optional defaults for every case
///   "cases": [
///     { "name": "members may post", "operation": "set", "path": "/rooms/r1/messages/m1",
///       "value": { "text": "hi", "ts": { ".sv": "timestamp" } },
///       "auth": { "uid": "alice" }, "expected": "allow" },
///     { "operation": "read", "path": "/items", "query": { "orderBy": "owner", "equalTo": "alice", "limitToFirst": 10 },
///       "expected": "deny" }
///   ]
/// }
/// ```
///
/// Operations: `read` (optional `query`: `orderBy` = `$key` | `$value` | `$priority` | a child path, `startAt`,
/// `endAt`, `equalTo`, `limitToFirst`, `limitToLast`; or a wire `q` object), `set` (`value`; `null` deletes) and
/// `update` (`value` is the update object, keys relative to `path`). `data`, `auth` (`null` = unauthenticated) and
/// `now` in a case override the defaults. Values use the REST data format: `.priority`, `.value` and server values
/// `{".sv": "timestamp"}` / `{".sv": {"increment": n}}`, resolved with `now` before the rules run.
public struct RulesTestSuite: Sendable {
    /// The `description` member.
    public var description: String?
    /// The embedded rules document as JSON text, when the file has a `rules` member.
    public var rulesSource: [UInt8]?
    /// The cases in file order.
    public var cases: [RulesTestCase]

    /// The default `now` when neither the file nor the case gives one: 2023-11-14T22:13:20Z.
    public static let defaultNow: Double = 1_700_000_000_000

    /// Parses a cases file.
    ///
    /// - Parameters:
    ///   - expectationsRequired: whether every case must say `expected` (a simulation asks for decisions only;
    ///     its cases default to `deny`).
    ///   - defaultData: the data when the file has no `data` member (a simulation's: the namespace's tree).
    /// - Throws: ``RulesTestSuiteError`` naming the case and member at fault.
    public static func parse(_ bytes: [UInt8], expectationsRequired: Bool = true, defaultData: Node = .empty)
        throws(RulesTestSuiteError) -> RulesTestSuite
    {
        let document: JSONValue
        do {
            document = try JSONReader.readValue(bytes)
        } catch {
            throw RulesTestSuiteError(message: "not valid JSON: \(error)")
        }
        guard case .object = document else { throw RulesTestSuiteError(message: "the cases file must be an object") }
        var suite = RulesTestSuite(description: document["description"]?.stringValue, rulesSource: nil, cases: [])
        switch document["rules"] {
        case .string(let text)?: suite.rulesSource = Array(text.utf8)  // the rules file's text, comments and all
        case let rules?: suite.rulesSource = Array(rules.description.utf8)
        case nil: break
        }
        let data = document["data"] == nil ? defaultData : try readData(document["data"], context: "data")
        let defaults = CaseDefaults(
            data: data, auth: document["auth"], now: try readNow(document["now"], context: "now") ?? defaultNow,
            expectationsRequired: expectationsRequired)
        guard case .array(let cases)? = document["cases"] else {
            throw RulesTestSuiteError(message: "the cases file needs a \"cases\" array")
        }
        for (index, value) in cases.enumerated() {
            suite.cases.append(try RulesTestCase(parsing: value, index: index, defaults: defaults))
        }
        return suite
    }

    struct CaseDefaults {
        var data: Node
        var auth: JSONValue?
        var now: Double
        var expectationsRequired = true
    }

    static func readData(_ value: JSONValue?, context: String) throws(RulesTestSuiteError) -> Node {
        guard let value else { return .empty }
        do {
            return try JSONReader.readData(Array(value.description.utf8)).resolved(timestamp: defaultNow) { _ in .empty }
        } catch {
            throw RulesTestSuiteError(message: "\(context): not valid Firebase data: \(error)")
        }
    }

    static func readNow(_ value: JSONValue?, context: String) throws(RulesTestSuiteError) -> Double? {
        guard let value else { return nil }
        guard case .number(let number) = value else { throw RulesTestSuiteError(message: "\(context) must be a number") }
        return number
    }
}

/// A malformed cases file.
public struct RulesTestSuiteError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and where.
    public var message: String

    /// Creates an error.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
