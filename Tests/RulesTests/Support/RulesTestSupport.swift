import DataModel
import Testing

@testable import Rules

/// Helpers shared by the rules tests.
enum RulesTestSupport {
    /// Loads rules from text.
    static func load(_ text: String, options: RulesOptions = RulesOptions()) throws -> RuleSet {
        try RuleSet(source: Array(text.utf8), fileName: "test.rules.json", options: options)
    }

    /// The load error for `text`, or nil when it loads.
    static func loadError(_ text: String, options: RulesOptions = RulesOptions()) -> RulesLoadError? {
        do {
            _ = try RuleSet(source: Array(text.utf8), fileName: "test.rules.json", options: options)
            return nil
        } catch {
            return error
        }
    }

    /// Firebase data from JSON text.
    static func data(_ json: String?) throws -> Node {
        guard let json else { return .empty }
        return try JSONReader.readData(Array(json.utf8)).node
    }

    /// A JSON value from text.
    static func json(_ text: String) throws -> JSONValue {
        try JSONReader.readValue(Array(text.utf8))
    }

    /// The JSON string literal for `text`.
    static func quoted(_ text: String) -> String {
        JSONValue.string(text).description
    }

    /// Where the test files are.
    static let fixtures: String = {
        var path = #filePath
        while let slash = path.lastIndex(of: "/"), !path.hasSuffix("/RulesTests") { path = String(path[..<slash]) }
        return path + "/Fixtures"
    }()
}

/// How a single expression fares: rejected at load, failing at run time, or a boolean.
enum ExpressionOutcome: Equatable, CustomStringConvertible {
    case invalid
    case error
    case `true`
    case `false`

    var description: String {
        switch self {
        case .invalid: return "invalid"
        case .error: return "error"
        case .true: return "true"
        case .false: return "false"
        }
    }
}

/// Evaluates `rule` as the `.read` rule of a location below wildcards named `wildcards` (bound to the given keys),
/// the way targaryen's live-parity fixtures do.
func evaluate(
    _ rule: String, auth: String? = nil, data: String? = nil, wildcards: [(name: String, key: String)] = [],
    query: QueryParams? = nil, options: RulesOptions = RulesOptions()
) throws -> ExpressionOutcome {
    var node = "{\".read\": \(RulesTestSupport.quoted(rule))}"
    for (name, _) in wildcards.reversed() { node = "{\(RulesTestSupport.quoted(name)): \(node)}" }
    guard let rules = try? RulesTestSupport.load("{\"rules\": \(node)}", options: options) else { return .invalid }
    let path = try Path(wildcards.map(\.key).joined(separator: "/"))
    let context = RulesContext(
        auth: try auth.map(RulesTestSupport.json), root: try RulesTestSupport.data(data), now: 1_700_000_000_000,
        explain: true)
    let decision = rules.authorizeRead(at: path, query: query, context: context)
    switch try #require(decision.trace.last).outcome {
    case .true: return .true
    case .false: return .false
    case .error: return .error
    }
}
