import DataModel
import Dispatch
import Foundation

/// A location, ordered and filtered (the SDK's `DatabaseQuery`): observe it, read it once, or refine it.
public class DatabaseQuery: @unchecked Sendable {  // immutable
    let database: Database
    let path: Path
    /// The query's members as the wire sends them (`i`, `sp`, `sn`, `sin`, `ep`, `en`, `ein`, `l`, `vf`).
    let members: [(key: String, value: JSONValue)]
    let params: QueryParams
    /// Why the query cannot be used (an invalid combination of constraints), reported to its observers.
    let problem: String?
    /// Set for `.info/connected` and `.info/serverTimeOffset`.
    let infoKey: InfoKey?

    init(database: Database, path: Path, members: [(key: String, value: JSONValue)] = [], problem: String? = nil,
         infoKey: InfoKey? = nil)
    {
        self.database = database
        self.path = path
        self.members = members
        self.infoKey = infoKey
        var problem = problem
        var params = QueryParams.all
        // A plain location (every reference, and one per event snapshot) has nothing to parse.
        if !members.isEmpty {
            do throws(QueryError) {
                params = try QueryParams(wireObject: .object(members))
            } catch {
                problem = problem ?? "invalid query: \(error)"
            }
        }
        self.params = params
        self.problem = problem
    }

    /// The location of the query.
    public var ref: DatabaseReference { DatabaseReference(database: database, path: path, infoKey: infoKey) }

    // MARK: - Observing

    /// Calls `block` for every `eventType` event; returns the handle for ``removeObserver(withHandle:)``.
    @discardableResult
    public func observe(_ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void) -> UInt {
        observe(eventType, andPreviousSiblingKeyWith: { snapshot, _ in block(snapshot) }, withCancel: nil)
    }

    /// As ``observe(_:with:)``; `cancelBlock` hears why the observation ended (the rules refused it).
    @discardableResult
    public func observe(_ eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void,
                        withCancel cancelBlock: ((any Error) -> Void)?) -> UInt
    {
        observe(eventType, andPreviousSiblingKeyWith: { snapshot, _ in block(snapshot) }, withCancel: cancelBlock)
    }

    /// Calls `block` with each event and the key of the sibling before the child (`nil` for the first).
    @discardableResult
    public func observe(_ eventType: DataEventType,
                        andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
                        withCancel cancelBlock: ((any Error) -> Void)? = nil) -> UInt
    {
        register(eventType, once: false, block: block, cancel: cancelBlock)
    }

    /// Calls `block` once, with the first `eventType` event.
    public func observeSingleEvent(of eventType: DataEventType, with block: @escaping (DataSnapshot) -> Void,
                                   withCancel cancelBlock: ((any Error) -> Void)? = nil)
    {
        _ = register(eventType, once: true, block: { snapshot, _ in block(snapshot) }, cancel: cancelBlock)
    }

    /// The first `eventType` event.
    public func observeSingleEvent(of eventType: DataEventType) async throws -> DataSnapshot {
        try await observeSingleEventAndPreviousSiblingKey(of: eventType).0
    }

    /// The first `eventType` event and the previous sibling's key.
    public func observeSingleEventAndPreviousSiblingKey(of eventType: DataEventType) async throws
        -> (DataSnapshot, String?)
    {
        try await withCheckedThrowingContinuation { continuation in
            observeSingleEvent(of: eventType, andPreviousSiblingKeyWith: { snapshot, previous in
                continuation.resume(returning: (snapshot, previous))
            }, withCancel: { error in continuation.resume(throwing: error) })
        }
    }

    /// As ``observeSingleEvent(of:with:withCancel:)`` with the previous sibling's key.
    public func observeSingleEvent(of eventType: DataEventType,
                                   andPreviousSiblingKeyWith block: @escaping (DataSnapshot, String?) -> Void,
                                   withCancel cancelBlock: ((any Error) -> Void)? = nil)
    {
        _ = register(eventType, once: true, block: block, cancel: cancelBlock)
    }

    private func register(_ kind: DataEventType, once: Bool, block: @escaping (DataSnapshot, String?) -> Void,
                          cancel: ((any Error) -> Void)?) -> UInt
    {
        if let problem {
            let error = DatabaseError(status: "invalid_query", message: problem)
            database.engine.callbacks.post { cancel?(error) }
            return 0
        }
        return database.engine.observe(self, kind: kind, once: once, block: block, cancel: cancel)
    }

    /// Stops the observer `handle`.
    public func removeObserver(withHandle handle: UInt) {
        database.engine.removeObserver(handle)
    }

    /// Stops every observer at this location.
    public func removeAllObservers() {
        database.engine.removeAllObservers(at: path)
    }

    /// The events of `eventType` as an asynchronous sequence; it ends with an error when the observation is
    /// cancelled, and stops observing when the consumer stops.
    public func events(_ eventType: DataEventType) -> AsyncThrowingStream<DataEvent, any Error> {
        AsyncThrowingStream { continuation in
            let handle = observe(eventType, andPreviousSiblingKeyWith: { snapshot, previous in
                continuation.yield(DataEvent(snapshot: snapshot, previousSiblingKey: previous))
            }, withCancel: { error in continuation.finish(throwing: error) })
            let engine = database.engine
            continuation.onTermination = { _ in engine.removeObserver(handle) }
        }
    }

    // MARK: - Reading once

    /// Reads the data from the server (or, offline, from data the client holds); the block gets `(error,
    /// snapshot)`.
    public func getData(completion: @escaping ((any Error)?, DataSnapshot?) -> Void) {
        if let problem {
            let error = DatabaseError(status: "invalid_query", message: problem)
            return database.engine.callbacks.post { completion(error, nil) }
        }
        let reference = ref
        let params = self.params
        database.engine.get(self) { result in
            switch result {
            case .success(let node): completion(nil, DataSnapshot(reference: reference, node: node, query: params))
            case .failure(let error): completion(error, nil)
            }
        }
    }

    /// Reads the data once.
    public func getData() async throws -> DataSnapshot {
        try await withCheckedThrowingContinuation { continuation in
            getData { error, snapshot in
                if let snapshot { continuation.resume(returning: snapshot) } else {
                    continuation.resume(throwing: error ?? DatabaseError(status: "unknown", message: ""))
                }
            }
        }
    }

    // MARK: - Refining

    private func adding(_ added: [(key: String, value: JSONValue)], check: String? = nil) -> DatabaseQuery {
        let problem = check.flatMap { key in members.contains { $0.key == key } ? "\(key) is set twice" : nil }
        return DatabaseQuery(database: database, path: path, members: members + added, problem: self.problem ?? problem,
                             infoKey: infoKey)
    }

    private func ordered(by index: String) -> DatabaseQuery {
        adding([("i", .string(index))], check: "i")
    }

    /// Orders children by key.
    public func queryOrderedByKey() -> DatabaseQuery { ordered(by: ".key") }
    /// Orders children by value.
    public func queryOrderedByValue() -> DatabaseQuery { ordered(by: ".value") }
    /// Orders children by priority.
    public func queryOrderedByPriority() -> DatabaseQuery { ordered(by: ".priority") }
    /// Orders children by the value at `key` (a path) below each child.
    public func queryOrdered(byChild key: String) -> DatabaseQuery { ordered(by: key) }

    /// Children from `startValue` (and, among equal values, from `childKey`) on.
    public func queryStarting(atValue startValue: Any?, childKey: String? = nil) -> DatabaseQuery {
        bound("sp", "sn", startValue, childKey)
    }

    /// Children after `startValue` (and `childKey`).
    public func queryStarting(afterValue startValue: Any?, childKey: String? = nil) -> DatabaseQuery {
        bound("sp", "sn", startValue, childKey, exclusive: "sin")
    }

    /// Children up to `endValue` (and `childKey`).
    public func queryEnding(atValue endValue: Any?, childKey: String? = nil) -> DatabaseQuery {
        bound("ep", "en", endValue, childKey)
    }

    /// Children before `endValue` (and `childKey`).
    public func queryEnding(beforeValue endValue: Any?, childKey: String? = nil) -> DatabaseQuery {
        bound("ep", "en", endValue, childKey, exclusive: "ein")
    }

    /// Children whose value is `value` (and key `childKey`).
    public func queryEqual(toValue value: Any?, childKey: String? = nil) -> DatabaseQuery {
        let start = bound("sp", "sn", value, childKey)
        return start.bound("ep", "en", value, childKey)
    }

    /// The first `limit` children.
    public func queryLimited(toFirst limit: UInt) -> DatabaseQuery {
        adding([("l", .number(Double(limit))), ("vf", .string("l"))], check: "l")
    }

    /// The last `limit` children.
    public func queryLimited(toLast limit: UInt) -> DatabaseQuery {
        adding([("l", .number(Double(limit))), ("vf", .string("r"))], check: "l")
    }

    private func bound(_ valueKey: String, _ nameKey: String, _ value: Any?, _ childKey: String?,
                       exclusive: String? = nil) -> DatabaseQuery
    {
        guard let json = Self.boundValue(value) else {
            return adding([], check: nil).withProblem("a query bound must be a string, a number, a boolean or nil")
        }
        var added: [(key: String, value: JSONValue)] = [(valueKey, json)]
        let orderedByKey = members.contains { $0.key == "i" && $0.value == .string(".key") }
        if let childKey {
            added.append((nameKey, .string(childKey)))
        } else if exclusive != nil, !orderedByKey {
            // After every child with the value, or before every one (wire-protocol.md: the JS SDK's encoding).
            added.append((nameKey, .string(valueKey == "sp" ? "[MAX_NAME]" : "[MIN_NAME]")))
        }
        if let exclusive { added.append((exclusive, .bool(false))) }
        return adding(added, check: valueKey)
    }

    private func withProblem(_ problem: String) -> DatabaseQuery {
        DatabaseQuery(database: database, path: path, members: members, problem: self.problem ?? problem,
                      infoKey: infoKey)
    }

    private static func boundValue(_ value: Any?) -> JSONValue? {
        guard let value, !(value is NSNull) else { return .null }
        if let string = value as? String { return .string(string) }
        if ValueConversion.isBoolean(value) { return .bool((value as? NSNumber)?.boolValue ?? false) }
        if let number = value as? NSNumber { return .number(number.doubleValue) }
        return nil
    }
}

/// One event of ``DatabaseQuery/events(_:)``.
public struct DataEvent: @unchecked Sendable {  // a snapshot is immutable
    /// The data.
    public let snapshot: DataSnapshot
    /// For child events, the key of the sibling before the child (`nil` for the first).
    public let previousSiblingKey: String?
}
