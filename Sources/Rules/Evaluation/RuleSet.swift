#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import DataModel

/// A loaded, checked and compiled Firebase Realtime Database rules file, ready to authorize reads and writes
/// (security-rules.md).
///
/// Loading parses the file and every expression once; authorizing never parses. A `RuleSet` is immutable apart
/// from its coverage counters (atomics), so one instance serves every connection on every queue; a reload builds a
/// new instance and swaps the reference. Authorization is synchronous and allocation-light: a few microseconds for
/// a typical write.
public final class RuleSet: Sendable {
    /// The file name used in diagnostics.
    public let fileName: String
    /// The options the file was loaded with.
    public let options: RulesOptions
    /// Suspicious constructs in the file: they load, but probably do not do what their author meant.
    public let warnings: [RulesDiagnostic]
    /// The `.indexOn` declarations, for the data layer's indexes (they have no effect on security, §3.4).
    public let indexes: [RulesIndexDeclaration]
    let root: RuleNode
    /// Every rule in file order, for coverage.
    let rules: [CompiledRule]

    /// Loads and checks a rules file from bytes.
    ///
    /// - Parameters:
    ///   - source: the file's bytes (UTF-8; JSON with comments, §1.2).
    ///   - fileName: the name used in diagnostics.
    ///   - options: limits and strictness.
    /// - Throws: ``RulesLoadError`` with every error found, each with line, column and rule path.
    public init(source: [UInt8], fileName: String, options: RulesOptions = RulesOptions()) throws(RulesLoadError) {
        let result = try RuleTreeBuilder.build(source: source, fileName: fileName, options: options)
        self.fileName = fileName
        self.options = options
        self.warnings = result.warnings
        self.indexes = result.indexes
        self.root = result.root
        self.rules = result.rules
    }

    /// Reads and loads the rules file at `path`.
    ///
    /// - Throws: ``RulesLoadError``: the file cannot be read or is larger than ``RulesLimits/maxFileBytes``, or
    ///   any error of ``init(source:fileName:options:)``.
    public static func load(contentsOf path: String, options: RulesOptions = RulesOptions()) throws(RulesLoadError) -> RuleSet {
        let bytes = try readFile(path, limit: options.limits.maxFileBytes)
        return try RuleSet(source: bytes, fileName: path, options: options)
    }

    private static func readFile(_ path: String, limit: Int) throws(RulesLoadError) -> [UInt8] {
        func failure(_ message: String) -> RulesLoadError {
            RulesLoadError(errors: [
                RulesDiagnostic(severity: .error, file: path, position: nil, rulePath: "", message: message)
            ])
        }
        guard let file = fopen(path, "rb") else {
            throw failure("cannot open the rules file: \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
            if count > 0 { bytes.append(contentsOf: chunk[0..<count]) }
            if bytes.count > limit {
                throw failure("the rules file is larger than the limit of \(limit) bytes")
            }
            if count < chunk.count {
                if ferror(file) != 0 { throw failure("cannot read the rules file: \(String(cString: strerror(errno)))") }
                return bytes
            }
        }
    }

    /// Per-rule outcome counts since load, in file order (for the admin endpoint, `/.metrics` and
    /// `canopy rules test`'s coverage report).
    public var coverage: [RuleCoverage] { rules.map(\.coverage) }
}
