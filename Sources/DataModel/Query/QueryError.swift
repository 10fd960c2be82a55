/// Why a query object (wire `q`, or REST query parameters mapped onto it) is invalid (data-model.md §8.5).
public enum QueryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The query is not a JSON object.
    case notAnObject
    /// A member has the wrong type; names the member.
    case invalidMember(String)
    /// `i` names an invalid child path.
    case invalidIndexPath(PathError)
    /// A bound value of a type the index does not allow (key index: strings; priority: null/number/string; no
    /// objects anywhere); names the member.
    case invalidBound(String)
    /// `l` is not a positive integer.
    case invalidLimit

    /// A human-readable message.
    public var description: String {
        switch self {
        case .notAnObject: return "Query must be an object"
        case .invalidMember(let name): return "Query member \"\(name)\" has an invalid type"
        case .invalidIndexPath(let error): return "Invalid orderByChild path: \(error)"
        case .invalidBound(let name): return "Query bound \"\(name)\" is not valid for this index"
        case .invalidLimit: return "Query limit must be a positive integer"
        }
    }
}
