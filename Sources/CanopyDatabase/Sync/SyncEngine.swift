import DataModel
import Dispatch
import Wire

/// The client's state, owned by the connection's loop (a thread of its own): the views and their listens, the
/// writes not yet acknowledged, and the connection. Events are computed there, as the SDKs compute them, and
/// delivered on the callback queue.
final class SyncEngine: PersistentConnectionDelegate, @unchecked Sendable {
    // Every mutable property is owned by the loop's thread, except those `shared` guards.

    /// The thread that owns the socket and this state. The API's requests are posted to it in the order made
    /// (every caller's work goes through it, so that a write made before `goOffline()` is made before it).
    let loop: ConnectionLoop
    /// The blocks the engine calls, run on the callback queue in the order raised; every block the engine raises
    /// goes through it, so acknowledgements and events keep their order.
    let callbacks: Callbacks
    let connection: PersistentConnection
    weak var database: Database?
    private var views: [View.Key: View] = [:]
    private var viewsByTag: [Int: View] = [:]
    private var writes = IDOrderedQueue<LocalWrite>()
    private var nextTag = 1
    private var nextWriteID = 1
    private var info = InfoRegistrations()

    /// What callers read without a turn of the loop: handles, push ids and the server's clock.
    private struct Shared {
        var nextHandle: UInt = 1
        var pushIDs = PushIDGenerator()
        var serverTimeOffset: Double = 0
    }

    private let sharedLock = Lock()
    private var shared = Shared()  // guarded by `sharedLock`

    /// An engine connecting with `settings`, raising blocks on `callbackQueue` (`ownQueue`: the database made it).
    init(settings: PersistentConnection.Settings, callbackQueue: DispatchQueue, ownQueue: Bool) {
        loop = ConnectionLoop()
        callbacks = Callbacks(queue: callbackQueue, ownQueue: ownQueue, loop: loop)
        connection = PersistentConnection(settings: settings, loop: loop)
        loop.post { [self, loop, callbacks] in
            loop.turnEnded = { callbacks.deliver() }
            connection.delegate = self
            connection.goOnline()
        }
    }

    /// Disconnects for good and ends the loop's thread (the database is gone).
    func shutDown() {
        loop.post { [connection] in connection.goOffline() }
        loop.stop()
    }

    /// The server's clock minus this machine's, in milliseconds, as the last hello told.
    var serverTimeOffset: Double {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        return shared.serverTimeOffset
    }

    /// Server time now, as estimated from the hello's clock (milliseconds since the Unix epoch).
    var estimatedServerTime: Double { WallClock.milliseconds() + serverTimeOffset }

    /// A new push id from the estimated server time (the SDKs' `childByAutoId`).
    func makePushID() -> String {
        let now = WallClock.milliseconds()
        sharedLock.lock()
        defer { sharedLock.unlock() }
        return shared.pushIDs.next(timestamp: Int64(now + shared.serverTimeOffset))
    }

    // MARK: - Observing

    /// Adds a registration; its initial events come at once when the view already has data.
    func observe(_ query: DatabaseQuery, kind: DataEventType, once: Bool,
                 block: @escaping (DataSnapshot, String?) -> Void, cancel: ((any Error) -> Void)?) -> UInt
    {
        sharedLock.lock()
        let handle = shared.nextHandle
        shared.nextHandle += 1
        sharedLock.unlock()
        loop.post { [self] in
            let registration = Registration(handle: handle, kind: kind, block: block, cancel: cancel, once: once)
            if let infoKey = query.infoKey {
                info.add(registration, key: infoKey)
                deliverInfo(infoKey, to: [registration], reference: query.ref)
                return
            }
            let view = self.view(for: query)
            view.registrations.append(registration)
            if let raised = view.raised { raiseInitial(registration, view: view, data: raised) }
        }
        return handle
    }

    /// Removes the registration `handle`; the view's listen ends with its last registration.
    func removeObserver(_ handle: UInt) {
        loop.post { [self] in
            info.remove(handle)
            for view in views.values where view.registrations.contains(where: { $0.handle == handle }) {
                view.registrations.removeAll { $0.handle == handle }
                dropIfUnused(view)
            }
        }
    }

    /// Removes every registration at `query`'s location (any query).
    func removeAllObservers(at path: Path) {
        loop.post { [self] in
            for view in views.values where view.path == path {
                view.registrations.removeAll()
                dropIfUnused(view)
            }
        }
    }

    private func view(for query: DatabaseQuery) -> View {
        let key = View.Key(path: query.path, query: query.params)
        if let view = views[key] { return view }
        let tag: Int? = query.params.loadsAllData ? nil : nextTag
        if tag != nil { nextTag += 1 }
        let view = View(path: query.path, query: query.params, tag: tag)
        views[key] = view
        if let tag { viewsByTag[tag] = view }
        let request = ListenRequest(path: query.path, query: query.params,
                                    queryObject: query.params.loadsAllData ? nil : query.params.wireObject, tag: tag)
        connection.listen(request, currentHash: { [weak view] in view?.serverNode?.hash ?? "" }) { [weak self, weak view] outcome in
            guard let self, let view else { return }
            listenAnswered(view, outcome: outcome)
        }
        return view
    }

    private func listenAnswered(_ view: View, outcome: RequestOutcome) {
        guard views[view.key] === view else { return }
        guard outcome.isOK else {
            let error = DatabaseError(status: outcome.status, message: outcome.message)
            let cancelled = view.registrations
            forget(view)
            callbacks.raise { for registration in cancelled { registration.cancel?(error) } }
            return
        }
        // The server sends no data when the location is empty and nothing was pushed, or when the hash matched.
        if view.serverNode == nil { view.serverNode = .empty }
        refresh(view)
    }

    private func dropIfUnused(_ view: View) {
        guard view.registrations.isEmpty, views[view.key] === view else { return }
        forget(view)
        connection.unlisten(ListenKey(path: view.path, tag: view.tag), query: view.query,
                            queryObject: view.query.loadsAllData ? nil : view.query.wireObject)
    }

    private func forget(_ view: View) {
        views[view.key] = nil
        if let tag = view.tag { viewsByTag[tag] = nil }
    }

    // MARK: - Writing

    /// Applies a write locally at once (its events are raised before this returns to the caller's queue order),
    /// sends it, and reports the server's answer; a refused write is rolled back with events.
    ///
    /// `hash` makes a set a compare-and-set (transactions): the server refuses it with `datastale` unless the
    /// data's hash is that.
    func write(_ entries: [(path: Path, value: WriteValue)], merge: Bool, at path: Path, hash: String?,
               completion: WriteCompletion?)
    {
        // The request is encoded here, on the caller's thread, so that the connection's thread only numbers it.
        let request: PreparedRequest
        if merge {
            request = PreparedRequest(.merge(MergeRequest(path: path, entries: entries.map { entry in
                UpdateEntry(target: .node(path.relativePath(to: entry.path) ?? entry.path), value: entry.value)
            })))
        } else {
            request = PreparedRequest(.put(PutRequest(target: .node(path), value: entries[0].value, hash: hash)))
        }
        send(request, entries: entries.map { (path: $0.path, value: .read($0.value)) }, completion: completion)
    }

    /// A set of `value`'s JSON text `json` (``ValueConversion/checkedJSON(_:depth:)``), sent as it is: `value` is
    /// the data read from it, or `nil` for plain data, read only when a view shows it.
    func set(_ json: [UInt8], value: WriteValue?, at path: Path, completion: WriteCompletion?) {
        let written: Written = value.map { .read($0) } ?? .json(json, depth: path.depth)
        send(PreparedRequest(putAt: path, json: json), entries: [(path: path, value: written)], completion: completion)
    }

    /// What a write carries for local listeners: its data, or plain data's JSON text.
    private enum Written {
        case read(WriteValue)
        case json([UInt8], depth: Int)
    }

    private func send(_ request: PreparedRequest, entries: [(path: Path, value: Written)],
                      completion: WriteCompletion?)
    {
        loop.post { [self] in
            let id = nextWriteID
            nextWriteID += 1
            let resolved = entries.map { entry in
                switch entry.value {
                case .json(let json, let depth):
                    return (path: entry.path, value: LocalValue(json: json, depth: depth))
                case .read(let value):
                    var node = value.node
                    if !value.serverValues.isEmpty {
                        let current = visibleData(at: entry.path)
                        let now = estimatedServerTime
                        node = (try? value.resolved(timestamp: now) { current.descendant(at: $0) }) ?? node
                    }
                    return (path: entry.path, value: LocalValue(node: node))
                }
            }
            let local = LocalWrite(entries: resolved, id: id)
            writes.append(local, id: id)
            refresh(where: { local.affects($0.path) })
            connection.write(request) { [weak self] outcome in
                guard let self else { return }
                if let local = writes.remove(id: id) { refresh(where: { local.affects($0.path) }) }
                let error = outcome.isOK ? nil : DatabaseError(status: outcome.status, message: outcome.message)
                if let completion { callbacks.raise(completion, error) }
            }
        }
    }

    /// The data at `path` as local listeners see it: the server's data (from a view holding the location) with
    /// the unacknowledged writes applied.
    private func visibleData(at path: Path) -> Node {
        var base = Node.empty
        for view in views.values where view.tag == nil && view.path.contains(path) {
            if let server = view.serverNode, let relative = view.path.relativePath(to: path) {
                base = server.descendant(at: relative)
                break
            }
        }
        return writes.reduce(base) { $1.applied(to: $0, at: path) }
    }

    // MARK: - Reading once

    /// The data at `query` from the server, or from a view holding it when offline.
    func get(_ query: DatabaseQuery, completion: @escaping (Result<Node, DatabaseError>) -> Void) {
        loop.post { [self] in
            let request = GetRequest(path: query.path, query: query.params,
                                     queryObject: query.params.loadsAllData ? nil : query.params.wireObject)
            connection.get(request) { [weak self] outcome in
                guard let self else { return }
                if outcome.isOK, let node = Self.node(from: outcome.payload) {
                    return callbacks.raise { completion(.success(node)) }
                }
                if outcome.isDisconnected, let cached = cachedResult(for: query) {
                    return callbacks.raise { completion(.success(cached)) }
                }
                let error = DatabaseError(status: outcome.status, message: outcome.message)
                callbacks.raise { completion(.failure(error)) }
            }
        }
    }

    private func cachedResult(for query: DatabaseQuery) -> Node? {
        guard let view = views[View.Key(path: query.path, query: query.params)], view.serverNode != nil else {
            return views.values.contains { $0.tag == nil && $0.serverNode != nil && $0.path.contains(query.path) }
                ? query.params.result(from: visibleData(at: query.path)) : nil
        }
        return query.params.result(from: visible(view))
    }

    /// The server's data at `path` now (for transactions: their compare-and-set needs the server's hash);
    /// `completion` runs on the loop.
    func serverData(at path: Path, completion: @escaping (Result<Node, DatabaseError>) -> Void) {
        loop.post { [self] in
            connection.get(GetRequest(path: path)) { outcome in
                if outcome.isOK, let node = Self.node(from: outcome.payload) { return completion(.success(node)) }
                completion(.failure(DatabaseError(status: outcome.status, message: outcome.message)))
            }
        }
    }

    /// The data a `get` answered with (the answer's `d` in export format).
    static func node(from payload: ResponsePayload) -> Node? {
        switch payload {
        case .data(let node): return node
        case .text(let text): return Node(.string(text))
        case .json(let value):
            var writer = JSONWriter(capacity: 64)
            writer.write(value)
            return try? JSONReader.readData(writer.bytes).node
        }
    }

    // MARK: - Events

    private func visible(_ view: View) -> Node {
        let server = view.serverNode ?? .empty
        return writes.reduce(server) { $1.applied(to: $0, at: view.path) }
    }

    private func refresh(where affected: (View) -> Bool) {
        // `views.values` is the dictionary as it is now: a view dropped while events are raised (its `once`
        // registration ran) does not disturb the iteration, and no array of the views is made per write or push.
        for view in views.values where affected(view) { refresh(view) }
    }

    /// Raises the events that take `view` from the data last raised to what it shows now.
    private func refresh(_ view: View) {
        guard view.serverNode != nil || writes.contains(where: { $0.entries.contains { $0.path.contains(view.path) } })
        else { return }
        let now = visible(view)
        guard let before = view.raised else {
            view.raised = now
            for registration in view.registrations { raiseInitial(registration, view: view, data: now) }
            return
        }
        guard before != now else { return }
        view.raised = now
        let wantsChildEvents = view.registrations.contains { $0.kind != .value }
        deliver(Self.events(view.query, from: before, to: now, childEvents: wantsChildEvents), view: view, data: now)
    }

    /// The child events between two versions of a location (when `childEvents`: nobody hears them otherwise, and
    /// they cost a diff of the children), then `value` when the query's result changed (a leaf's change has no
    /// child events, only the value).
    static func events(_ query: QueryParams, from before: Node, to now: Node, childEvents: Bool) -> [ViewEvent] {
        var events = childEvents ? query.events(from: before, to: now).filter { $0.kind != .value } : []
        if query.result(from: before) != query.result(from: now) { events.append(.value) }
        return events
    }

    /// A new registration's first events: `childAdded` for each child in order, then the value.
    private func raiseInitial(_ registration: Registration, view: View, data: Node) {
        var events = view.query.events(from: .empty, to: data).filter { $0.kind == .childAdded }
        events.append(.value)
        deliver(events, view: view, data: data, only: registration.handle)
    }

    private func deliver(_ events: [ViewEvent], view: View, data: Node, only handle: UInt? = nil) {
        guard let database else { return }
        let reference = DatabaseReference(database: database, path: view.path)
        var finished: Set<UInt> = []
        for event in events {
            for registration in view.registrations where handle == nil || registration.handle == handle {
                guard registration.kind == event.kind, !finished.contains(registration.handle) else { continue }
                let block = registration.block
                switch event {
                case .value:
                    let snapshot = DataSnapshot(reference: reference, node: view.query.result(from: data),
                                                query: view.query)
                    callbacks.raise(block, snapshot, previousKey: nil)
                case .childAdded(let key, let node, let previous), .childChanged(let key, let node, let previous),
                     .childMoved(let key, let node, let previous):
                    let snapshot = DataSnapshot(reference: reference.child(key.string), node: node, query: nil)
                    callbacks.raise(block, snapshot, previousKey: previous?.string)
                case .childRemoved(let key, let node):
                    let snapshot = DataSnapshot(reference: reference.child(key.string), node: node, query: nil)
                    callbacks.raise(block, snapshot, previousKey: nil)
                }
                if registration.once { finished.insert(registration.handle) }
            }
        }
        if !finished.isEmpty {
            view.registrations.removeAll { finished.contains($0.handle) }
            dropIfUnused(view)
        }
    }

    // MARK: - .info

    private func deliverInfo(_ key: InfoKey, to registrations: [Registration], reference: DatabaseReference) {
        let value: Node
        switch key {
        case .connected: value = Node(.bool(connection.isConnected))
        case .serverTimeOffset: value = Node(.number(serverTimeOffset))
        }
        let snapshot = DataSnapshot(reference: reference, node: value, query: nil)
        let blocks = registrations.filter { $0.kind == .value }.map(\.block)
        for registration in registrations where registration.once { info.remove(registration.handle) }
        if !blocks.isEmpty { callbacks.raise { for block in blocks { block(snapshot, nil) } } }
    }

    private func infoChanged(_ key: InfoKey) {
        guard let database else { return }
        let reference = DatabaseReference(database: database, path: .root, infoKey: key)
        deliverInfo(key, to: info.registrations(for: key), reference: reference)
    }

    // MARK: - Connection events

    func connectionDidConnect(serverTimeOffset: Double) {
        sharedLock.lock()
        shared.serverTimeOffset = serverTimeOffset
        sharedLock.unlock()
        infoChanged(.serverTimeOffset)
        infoChanged(.connected)
    }

    func connectionDidDisconnect() {
        infoChanged(.connected)
    }

    func connectionDidReceive(_ update: ServerUpdate, tag: Int?) {
        if let tag {
            guard let view = viewsByTag[tag] else { return }
            apply(update, to: view)
            refresh(view)
            return
        }
        for view in views.values where view.tag == nil {
            if apply(update, to: view) { refresh(view) }
        }
    }

    /// Applies a push to the server data of `view`; returns whether it concerned the view.
    @discardableResult
    private func apply(_ update: ServerUpdate, to view: View) -> Bool {
        switch update {
        case .overwrite(let path, let data):
            return overwrite(view, at: path, with: data)
        case .merge(let path, let changes):
            var touched = false
            for change in changes {
                guard case .node(let relative) = change.target else { continue }
                touched = overwrite(view, at: path.appending(relative), with: change.node) || touched
            }
            return touched
        }
    }

    private func overwrite(_ view: View, at path: Path, with data: Node) -> Bool {
        if let relative = view.path.relativePath(to: path) {
            view.serverNode = (view.serverNode ?? .empty).setting(data, at: relative)
            return true
        }
        if let relative = path.relativePath(to: view.path) {
            view.serverNode = data.descendant(at: relative)
            return true
        }
        return false
    }

    func connectionDidRevokeListen(path: Path, tag: Int?) {
        guard let view = tag.flatMap({ viewsByTag[$0] }) ?? views[View.Key(path: path, query: .all)] else { return }
        let cancelled = view.registrations
        forget(view)
        let error = DatabaseError(status: "permission_denied", message: "Permission denied")
        callbacks.raise { for registration in cancelled { registration.cancel?(error) } }
    }
}

extension ViewEvent {
    /// The registration kind that hears this event.
    var kind: DataEventType {
        switch self {
        case .value: .value
        case .childAdded: .childAdded
        case .childChanged: .childChanged
        case .childMoved: .childMoved
        case .childRemoved: .childRemoved
        }
    }
}
