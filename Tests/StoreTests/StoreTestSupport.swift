import DataModel
import Dispatch
import Synchronization
@testable import Store
import Testing

/// Builders for paths and values from text, for readable tests.
enum Fixture {
    static func path(_ text: String) throws -> Path {
        try Path(text)
    }

    static func value(_ json: String, at path: Path = .root) throws -> WriteValue {
        try JSONReader.readData(Array(json.utf8), depth: path.depth)
    }

    static func node(_ json: String) throws -> Node {
        let value = try value(json)
        #expect(value.serverValues.isEmpty, "node(_:) is for plain values")
        return value.node
    }

    /// A set of `json` at `path`, which may end with `/.priority`.
    static func set(_ path: String, _ json: String) throws -> StoreWrite {
        let target = try WriteTarget(parsing: path)
        switch target {
        case .node(let location), .priority(of: let location):
            return .set(target, try value(json, at: location), expectedHash: nil)
        }
    }

    static func update(_ path: String, _ entries: [(String, String)]) throws -> StoreWrite {
        let base = try Path(path)
        return .update(base, try entries.map { relative, json in
            let target = try WriteTarget(parsing: relative)
            return UpdateEntry(target, try value(json, at: base))
        })
    }

    /// `/scores`, for query tests.
    static let scores = Path(keys: [Key.scores])

    /// A fixed server clock, so that tests and reference models agree on timestamps.
    static let fixedTimestamp: Double = 1_700_000_000_000
    static let fixedClock: @Sendable () -> Double = { fixedTimestamp }

    static func memoryStore(observer: (@Sendable (ChangeRecord) -> Void)? = nil) throws -> Store {
        try Store(configuration: StoreConfiguration(clock: fixedClock), observer: observer)
    }
}

extension Store {
    /// Applies a write and waits for its completion.
    func apply(_ write: StoreWrite) async -> Result<WriteOutcome, StoreError> {
        await withCheckedContinuation { continuation in
            self.write(write, by: .privileged) { continuation.resume(returning: $0) }
        }
    }

    /// Applies a write that must succeed.
    @discardableResult
    func applyOrFail(_ write: StoreWrite, sourceLocation: SourceLocation = #_sourceLocation) async -> WriteOutcome? {
        switch await apply(write) {
        case .success(let outcome): return outcome
        case .failure(let error):
            Issue.record("write failed: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Reads a node and waits for it.
    func value(at path: Path) async -> Node {
        await withCheckedContinuation { continuation in
            read(path) { continuation.resume(returning: $0) }
        }
    }

    /// The whole tree.
    var tree: Node {
        get async { await value(at: .root) }
    }
}


/// The content of a text file, without a trailing newline.
func readTextFile(_ path: String) throws -> String {
    var text = String(decoding: try FileSystem.readFile(path), as: UTF8.self)
    while text.hasSuffix("\n") { text.removeLast() }
    return text
}

/// Writes a text file.
func writeTextFile(_ path: String, _ text: String) throws {
    try FileSystem.writeAtomically(path, temporaryPath: path + ".tmp", bytes: Array(text.utf8))
}

/// A value behind a mutex, in a class so tests can share it with escaping closures.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // `value` is only touched under `mutex`.
    private let mutex = Mutex(())
    private var stored: Value

    init(_ value: Value) {
        stored = value
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { _ in body(&stored) }
    }

    var value: Value { withLock { $0 } }
}

extension Key {
    /// The key `scores`.
    static let scores: Key = {
        guard let key = try? Key("scores") else { preconditionFailure("a valid key") }
        return key
    }()
}
