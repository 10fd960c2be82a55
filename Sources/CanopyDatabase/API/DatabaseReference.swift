import DataModel
import Foundation
import Wire

/// A location in the database (the SDK's `DatabaseReference`): read and observe it as a query, write it, and
/// arrange writes for when the connection drops.
public final class DatabaseReference: DatabaseQuery, @unchecked Sendable {  // immutable
    init(database: Database, path: Path, infoKey: InfoKey? = nil) {
        super.init(database: database, path: path, infoKey: infoKey)
    }

    /// The last key of the location (`nil` at the root).
    public var key: String? {
        if let infoKey { return infoKey == .connected ? "connected" : "serverTimeOffset" }
        return path.lastKey?.string
    }

    /// The location above (`nil` at the root).
    public var parent: DatabaseReference? {
        path.parent.map { DatabaseReference(database: database, path: $0) }
    }

    /// The root of the database.
    public var root: DatabaseReference { DatabaseReference(database: database, path: .root) }

    /// The location at `pathString` (`a/b/c`) below this one.
    public func child(_ pathString: String) -> DatabaseReference {
        if path.isRoot, let infoKey = InfoKey(path: pathString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))) {
            return DatabaseReference(database: database, path: .root, infoKey: infoKey)
        }
        let relative = (try? Path(pathString)) ?? Path(keys: [Key(trusted: pathString)])
        return DatabaseReference(database: database, path: path.appending(relative))
    }

    /// A new child with a push id: time-ordered, unique, made on this device (`childByAutoId`).
    public func childByAutoId() -> DatabaseReference {
        child(database.engine.makePushID())
    }

    // MARK: - Writing

    /// Replaces the data at this location (`nil` removes it); local observers see it at once.
    public func setValue(_ value: Any?) {
        write(value, priority: nil, withPriority: false, block: nil)
    }

    /// Replaces the data; `block` gets the server's answer.
    public func setValue(_ value: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        write(value, priority: nil, withPriority: false, block: block)
    }

    /// Replaces the data and its priority.
    public func setValue(_ value: Any?, andPriority priority: Any?) {
        write(value, priority: priority, withPriority: true, block: nil)
    }

    /// Replaces the data and its priority; `block` gets the server's answer.
    public func setValue(_ value: Any?, andPriority priority: Any?,
                         withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void)
    {
        write(value, priority: priority, withPriority: true, block: block)
    }

    /// Replaces the data; returns once the server acknowledged it.
    @discardableResult
    public func setValue(_ value: Any?) async throws -> DatabaseReference {
        try await acknowledged { self.setValue(value, withCompletionBlock: $0) }
    }

    /// Replaces the data and its priority; returns once acknowledged.
    @discardableResult
    public func setValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        try await acknowledged { self.setValue(value, andPriority: priority, withCompletionBlock: $0) }
    }

    /// Replaces the data with `value` encoded as JSON.
    public func setValue<T: Encodable>(from value: T, encoder: JSONEncoder = JSONEncoder(),
                                       completion: (((any Error)?) -> Void)? = nil) throws
    {
        let data = try encoder.encode(value)
        let object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        setValue(object) { error, _ in completion?(error) }
    }

    /// Writes each child path of `values` (`"a/b": 1`) at once: all or none (a multi-path update).
    public func updateChildValues(_ values: [AnyHashable: Any]) {
        update(values, block: nil)
    }

    /// Writes each child path of `values` at once; `block` gets the server's answer.
    public func updateChildValues(_ values: [AnyHashable: Any],
                                  withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void)
    {
        update(values, block: block)
    }

    private func update(_ values: [AnyHashable: Any], block: (((any Error)?, DatabaseReference) -> Void)?) {
        var entries: [(path: Path, value: WriteValue)] = []
        do {
            for (key, value) in values {
                let relative = try Path("\(key.base)")
                entries.append((path.appending(relative), try ValueConversion.writeValue(value, depth: path.depth + relative.depth)))
            }
        } catch {
            return fail(error, block)
        }
        database.engine.write(entries, merge: true, at: path, hash: nil,
                              completion: block.map { WriteCompletion(block: $0, reference: self) })
    }

    /// Writes each child path of `values`; returns once acknowledged.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await acknowledged { self.updateChildValues(values, withCompletionBlock: $0) }
    }

    /// Removes the data at this location.
    public func removeValue() {
        setValue(nil)
    }

    /// Removes the data; `block` gets the server's answer.
    public func removeValue(completionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        setValue(nil, withCompletionBlock: block)
    }

    /// Removes the data; returns once acknowledged.
    @discardableResult
    public func removeValue() async throws -> DatabaseReference {
        try await acknowledged { self.removeValue(completionBlock: $0) }
    }

    private func write(_ value: Any?, priority: Any?, withPriority: Bool,
                       block: (((any Error)?, DatabaseReference) -> Void)?)
    {
        let written: (json: [UInt8], value: WriteValue?)
        do {
            written = try ValueConversion.checkedJSON(
                withPriority ? ["." + "value": value ?? NSNull(), ".priority": priority ?? NSNull()] : value,
                depth: path.depth)
        } catch {
            return fail(error, block)
        }
        database.engine.set(written.json, value: written.value, at: path,
                            completion: block.map { WriteCompletion(block: $0, reference: self) })
    }

    private func fail(_ error: any Error, _ block: (((any Error)?, DatabaseReference) -> Void)?) {
        database.engine.callbacks.post { block?(error, self) }
    }

    private func acknowledged(_ start: (@escaping ((any Error)?, DatabaseReference) -> Void) -> Void) async throws
        -> DatabaseReference
    {
        try await withCheckedThrowingContinuation { continuation in
            start { error, reference in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: reference) }
            }
        }
    }

    // MARK: - onDisconnect

    /// Sets `value` here when this client's connection drops (the server runs it).
    public func onDisconnectSetValue(_ value: Any?) {
        onDisconnectSet(value, block: nil)
    }

    /// Sets `value` here when the connection drops; `block` hears that the server registered it.
    public func onDisconnectSetValue(_ value: Any?,
                                     withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void)
    {
        onDisconnectSet(value, block: block)
    }

    /// Registers the set; returns once the server holds it.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?) async throws -> DatabaseReference {
        try await acknowledged { self.onDisconnectSetValue(value, withCompletionBlock: $0) }
    }

    private func onDisconnectSet(_ value: Any?, block: (((any Error)?, DatabaseReference) -> Void)?) {
        do {
            let written = try ValueConversion.writeValue(value, depth: path.depth)
            onDisconnect(.onDisconnectPut(PutRequest(target: .node(path), value: written)), block)
        } catch {
            fail(error, block)
        }
    }

    /// Updates the child paths of `values` when the connection drops.
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) {
        onDisconnectUpdate(values, block: nil)
    }

    /// Updates the child paths of `values` when the connection drops; `block` hears that the server registered it.
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any],
                                              withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void)
    {
        onDisconnectUpdate(values, block: block)
    }

    /// Registers the update; returns once the server holds it.
    @discardableResult
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await acknowledged { self.onDisconnectUpdateChildValues(values, withCompletionBlock: $0) }
    }

    private func onDisconnectUpdate(_ values: [AnyHashable: Any], block: (((any Error)?, DatabaseReference) -> Void)?) {
        do {
            var entries: [UpdateEntry] = []
            for (key, value) in values {
                let relative = try Path("\(key.base)")
                entries.append(UpdateEntry(target: .node(relative),
                                           value: try ValueConversion.writeValue(value, depth: path.depth + relative.depth)))
            }
            onDisconnect(.onDisconnectMerge(MergeRequest(path: path, entries: entries)), block)
        } catch {
            fail(error, block)
        }
    }

    /// Removes the data here when the connection drops.
    public func onDisconnectRemoveValue() {
        onDisconnectSet(nil, block: nil)
    }

    /// Removes the data here when the connection drops; `block` hears that the server registered it.
    public func onDisconnectRemoveValue(withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        onDisconnectSet(nil, block: block)
    }

    /// Registers the removal; returns once the server holds it.
    @discardableResult
    public func onDisconnectRemoveValue() async throws -> DatabaseReference {
        try await acknowledged { self.onDisconnectRemoveValue(withCompletionBlock: $0) }
    }

    /// Cancels the onDisconnect operations at and below this location.
    public func cancelDisconnectOperations() {
        onDisconnect(.onDisconnectCancel(path: path), nil)
    }

    /// Cancels the onDisconnect operations here and below; `block` hears that the server did.
    public func cancelDisconnectOperations(withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        onDisconnect(.onDisconnectCancel(path: path), block)
    }

    /// Cancels the onDisconnect operations here and below; returns once the server did.
    @discardableResult
    public func cancelDisconnectOperations() async throws -> DatabaseReference {
        try await acknowledged { self.cancelDisconnectOperations(withCompletionBlock: $0) }
    }

    private func onDisconnect(_ action: ClientAction, _ block: (((any Error)?, DatabaseReference) -> Void)?) {
        let engine = database.engine
        engine.loop.post {
            engine.connection.onDisconnect(action) { outcome in
                let error = outcome.isOK ? nil : DatabaseError(status: outcome.status, message: outcome.message)
                engine.callbacks.raise { block?(error, self) }
            }
        }
    }
}

extension DatabaseReference: CustomStringConvertible {
    /// The location's URL.
    public var description: String {
        if let infoKey { return database.url + "/.info/" + (infoKey == .connected ? "connected" : "serverTimeOffset") }
        return database.url + (path.isRoot ? "" : path.description)
    }
}
