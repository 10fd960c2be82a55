import DataModel

/// Decodes the body `b` of a request into a ``ClientAction`` (wire-protocol.md §6).
struct RequestBodyParser {
    /// The body object.
    let body: MessageObject
    /// Limits for paths and data.
    let limits: DataLimits

    /// The action for the wire name `name`, `nil` when the name is unknown.
    func action(named name: String) throws(MessageProblem) -> ClientAction? {
        // Only ASCII names can be actions; `switch` on String would compare by canonical equivalence.
        guard name.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        switch name {
        case WireKey.statsAction:
            return .stats(counters: try body.value(WireKey.counters) ?? .object([]))
        case WireKey.authAction:
            return .auth(try auth(.auth))
        case WireKey.gauthAction:
            return .auth(try auth(.gauth))
        case WireKey.unauthAction:
            return .unauth
        case WireKey.appCheckAction:
            return .appCheck(token: try body.requiredString(WireKey.appCheckToken))
        case WireKey.unappCheckAction, WireKey.unappCheckActionJS:
            return .unappCheck
        case WireKey.listenAction, WireKey.legacyListenAction:
            return .listen(try listen())
        case WireKey.unlistenAction, WireKey.legacyUnlistenAction:
            let path = try path()
            let (query, object) = try query()
            return .unlisten(
                UnlistenRequest(path: path, query: query, queryObject: object, tag: try body.integer(WireKey.tag)))
        case WireKey.putAction:
            return .put(try put(allowingHash: true))
        case WireKey.mergeAction:
            return .merge(try merge())
        case WireKey.onDisconnectPutAction:
            return .onDisconnectPut(try put(allowingHash: false))
        case WireKey.onDisconnectMergeAction:
            return .onDisconnectMerge(try merge())
        case WireKey.onDisconnectCancelAction:
            return .onDisconnectCancel(path: try path())
        case WireKey.getAction:
            let path = try path()
            let (query, object) = try query()
            return .get(GetRequest(path: path, query: query, queryObject: object))
        default:
            return nil
        }
    }

    private func auth(_ method: AuthRequest.Method) throws(MessageProblem) -> AuthRequest {
        let credential = try body.requiredString(WireKey.credential)
        let variable = try body.value(WireKey.authVariable)
        if let variable {
            guard case .object = variable else {
                throw .wrongType(member: body.memberName(WireKey.authVariable), expected: .object)
            }
        }
        let noAuth = try body.bool(WireKey.noAuth) ?? false
        return AuthRequest(method: method, credential: credential, authVariable: variable, noAuth: noAuth)
    }

    private func listen() throws(MessageProblem) -> ListenRequest {
        let path = try path()
        let (query, object) = try query()
        let tag = try body.integer(WireKey.tag)
        if tag == nil && !query.loadsAllData { throw .filteredQueryWithoutTag }
        return ListenRequest(
            path: path, query: query, queryObject: object, tag: tag, hash: try body.string(WireKey.hash),
            compoundHash: try compoundHash())
    }

    private func compoundHash() throws(MessageProblem) -> CompoundHash? {
        guard let object = try body.object(WireKey.compoundHash) else { return nil }
        guard let texts = try object.strings(WireKey.compoundHashPaths) else {
            throw .missingMember(object.memberName(WireKey.compoundHashPaths))
        }
        guard let hashes = try object.strings(WireKey.compoundHashHashes) else {
            throw .missingMember(object.memberName(WireKey.compoundHashHashes))
        }
        var paths: [Path] = []
        paths.reserveCapacity(texts.count)
        for text in texts {
            do {
                paths.append(try Path(text, limits: limits))
            } catch {
                throw .invalidPath(member: object.memberName(WireKey.compoundHashPaths), error)
            }
        }
        return CompoundHash(paths: paths, hashes: hashes)
    }

    private func put(allowingHash: Bool) throws(MessageProblem) -> PutRequest {
        let text = try body.requiredString(WireKey.path)
        let target: WriteTarget
        do {
            // Keys never contain ".", so only a path with one can address a priority (or be invalid, which the
            // write-target parser reports the same way); the rest are plain paths.
            target =
                text.utf8.contains(UInt8(ascii: "."))
                ? try WriteTarget(parsing: text, limits: limits) : .node(try Path(text, limits: limits))
        } catch {
            throw .invalidPath(member: body.memberName(WireKey.path), error)
        }
        let depth: Int
        switch target {
        case .node(let path), .priority(of: let path): depth = path.depth
        }
        let value = try data(depth: depth)
        if case .priority = target, !Self.isPriority(value) {
            throw .invalidPriority(member: body.memberName(WireKey.data))
        }
        return PutRequest(target: target, value: value, hash: allowingHash ? try body.string(WireKey.hash) : nil)
    }

    private func merge() throws(MessageProblem) -> MergeRequest {
        let path = try path()
        let range = try body.required(WireKey.data)
        let member = body.memberName(WireKey.data)
        guard body.isObject(range) else { throw .wrongType(member: member, expected: .object) }
        do {
            let entries = try JSONReader.readUpdate(body.slice(range), depth: path.depth, limits: limits, maxBytes: Int.max)
            return MergeRequest(path: path, entries: entries)
        } catch {
            throw .invalidData(member: member, JSONError(offset: range.lowerBound + error.offset, reason: error.reason))
        }
    }

    /// The required `p` as a path (no `.priority`).
    private func path() throws(MessageProblem) -> Path {
        let text = try body.requiredString(WireKey.path)
        do {
            return try Path(text, limits: limits)
        } catch {
            throw .invalidPath(member: body.memberName(WireKey.path), error)
        }
    }

    /// The optional `q` as normalized parameters plus the object as sent; `{}` or absent is the unfiltered query.
    private func query() throws(MessageProblem) -> (QueryParams, JSONValue?) {
        guard let object = try body.value(WireKey.query) else { return (.all, nil) }
        do {
            return (try QueryParams(wireObject: object), object)
        } catch {
            let member = body.memberName(WireKey.query)
            if error == .notAnObject { throw .wrongType(member: member, expected: .object) }
            throw .invalidQuery(member: member, error)
        }
    }

    /// The required `d`, parsed as data written `depth` levels below the root.
    private func data(depth: Int) throws(MessageProblem) -> WriteValue {
        let range = try body.required(WireKey.data)
        do {
            return try JSONReader.readData(body.slice(range), depth: depth, limits: limits, maxBytes: Int.max)
        } catch {
            throw .invalidData(
                member: body.memberName(WireKey.data),
                JSONError(offset: range.lowerBound + error.offset, reason: error.reason))
        }
    }

    /// Whether a value can be written as a priority: nothing, a plain number or string, or a server value.
    static func isPriority(_ value: WriteValue) -> Bool {
        if value.node.isEmpty { return true }
        if value.serverValues.count == 1, let only = value.serverValues.first, only.path.isRoot, !only.isPriority {
            return value.node.priority == nil
        }
        guard value.serverValues.isEmpty, value.node.priority == nil else { return false }
        switch value.node.leafValue {
        case .number?, .string?: return true
        case .bool?, nil: return false
        }
    }
}
