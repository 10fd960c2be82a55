/// The header fields of a message: ordered `(name, value)` pairs with case-insensitive name lookup (RFC 9110 §5).
///
/// Order and duplicates are kept as received, because some fields (`Set-Cookie`, `Sec-WebSocket-Extensions`)
/// mean something different when combined. Lookups compare names without ASCII case, as field names are
/// case-insensitive (RFC 9110 §5.1). Lookup is a linear scan: messages carry a few dozen fields at most
/// (the parser caps them at ``HTTPLimits/maxHeaderCount``), where a dictionary would cost more than it saves.
public struct HTTPHeaders: Sendable, Sequence, Equatable, ExpressibleByDictionaryLiteral {
    /// One header field.
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    /// Creates an empty header list.
    public init() {
        fields = []
    }

    /// Creates a header list from `(name, value)` pairs, keeping their order.
    public init(_ fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// Creates a header list from a literal such as `["Content-Type": "text/plain"]`, keeping its order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The number of fields, counting repeated names separately.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field called `name` (compared without case), or nil.
    public subscript(name: String) -> String? {
        fields.first { ASCII.equalIgnoringCase($0.name.utf8, name.utf8) }?.value
    }

    /// The values of every field called `name` (compared without case), in order.
    public func values(for name: String) -> [String] {
        fields.compactMap { ASCII.equalIgnoringCase($0.name.utf8, name.utf8) ? $0.value : nil }
    }

    /// Whether at least one field is called `name` (compared without case).
    public func contains(name: String) -> Bool {
        fields.contains { ASCII.equalIgnoringCase($0.name.utf8, name.utf8) }
    }

    /// Whether `token` is an element of the comma-separated list in the fields called `name`, ignoring case.
    ///
    /// For example `Connection: keep-alive, Upgrade` contains the token `upgrade` in `connection`. Elements are
    /// trimmed of optional whitespace and empty elements are skipped (RFC 9110 §5.6.1).
    public func containsToken(_ token: String, in name: String) -> Bool {
        listElements(for: name).contains { !$0.isEmpty && ASCII.equalIgnoringCase($0, token.utf8) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Removes every field called `name` (compared without case) and appends one with `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field called `name` (compared without case).
    public mutating func remove(name: String) {
        fields.removeAll { ASCII.equalIgnoringCase($0.name.utf8, name.utf8) }
    }

    /// Iterates the fields in order.
    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// Whether both lists hold the same names and values in the same order (names compared exactly).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Every element of the comma-separated lists in the fields called `name`, trimmed of optional whitespace,
    /// with empty elements kept so callers can decide whether they are allowed (RFC 9110 §5.6.1).
    func listElements(for name: String) -> [Substring.UTF8View] {
        var elements: [Substring.UTF8View] = []
        for field in fields where ASCII.equalIgnoringCase(field.name.utf8, name.utf8) {
            let value = field.value[...].utf8
            for element in value.split(separator: ASCII.comma, omittingEmptySubsequences: false) {
                elements.append(ASCII.trimmingWhitespace(element))
            }
        }
        return elements
    }
}
