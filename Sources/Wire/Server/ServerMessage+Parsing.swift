import DataModel

extension ServerMessage {
    /// Parses one complete server message, as a client does (protocol test clients, load testers).
    ///
    /// Push data is read as Firebase data (export format), so objects come back in key order; a response's `d` is
    /// ``ResponsePayload/text(_:)`` when it is a string and ``ResponsePayload/json(_:)`` otherwise (which request it
    /// answers decides whether it is data), so re-encoding a parsed response reproduces its bytes.
    ///
    /// - Throws: ``WireError``: ``WireError/invalidJSON(_:)``, ``WireError/malformedMessage(_:)`` (an unknown push
    ///   action is ``MessageProblem/unknownPushAction(_:)``) or ``WireError/unknownControlType(_:)``.
    public static func parse(_ bytes: [UInt8], limits: DataLimits = .default) throws(WireError) -> ServerMessage {
        let result: Result<ServerMessage, WireError> = bytes.withUnsafeBytes { raw in
            do throws(WireError) { return .success(try parse(raw, limits: limits)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one complete server message from raw bytes (see ``parse(_:limits:)``).
    public static func parse(_ bytes: UnsafeRawBufferPointer, limits: DataLimits = .default) throws(WireError)
        -> ServerMessage
    {
        let maxNesting = max(JSONReader.defaultMaxNesting, limits.maxDepth * 2 + 8)
        let envelope = try ClientMessage.readEnvelope(bytes, maxNesting: maxNesting)
        let layer: String
        let payload: MessageObject
        do throws(MessageProblem) {
            layer = try envelope.requiredString(WireKey.layer)
            guard let object = try envelope.object(WireKey.payload) else { throw .missingMember(WireKey.payload) }
            payload = object
        } catch {
            throw .malformedMessage(error)
        }
        if ClientMessage.sameBytes(layer, equalTo: WireKey.controlLayer) { return try parseControl(payload) }
        guard ClientMessage.sameBytes(layer, equalTo: WireKey.dataLayer) else {
            throw .malformedMessage(.unknownLayer(layer))
        }
        do throws(MessageProblem) {
            if let number = try payload.integer(WireKey.requestNumber) { return try parseResponse(number, payload) }
            return try parsePush(payload, limits: limits)
        } catch {
            throw .malformedMessage(error)
        }
    }

    private static func parseControl(_ payload: MessageObject) throws(WireError) -> ServerMessage {
        let type: String
        do throws(MessageProblem) {
            type = try payload.requiredString(WireKey.controlType)
            switch type.utf8.allSatisfy({ $0 < 0x80 }) ? type : "" {
            case WireKey.hello: return .handshake(try handshake(payload))
            case WireKey.pong: return .pong
            case WireKey.reset: return .reset(host: try payload.requiredString(WireKey.controlPayload))
            case WireKey.shutdown: return .shutdown(reason: try payload.requiredString(WireKey.controlPayload))
            case WireKey.error: return .error(try payload.requiredString(WireKey.controlPayload))
            default: break
            }
        } catch {
            throw .malformedMessage(error)
        }
        throw .unknownControlType(type)
    }

    private static func handshake(_ payload: MessageObject) throws(MessageProblem) -> Handshake {
        guard let hello = try payload.object(WireKey.controlPayload) else {
            throw .missingMember(payload.memberName(WireKey.controlPayload))
        }
        guard let timestamp = try hello.integer(WireKey.helloTimestamp) else {
            throw .missingMember(hello.memberName(WireKey.helloTimestamp))
        }
        return Handshake(
            timestamp: timestamp, host: try hello.requiredString(WireKey.helloHost),
            sessionID: try hello.requiredString(WireKey.helloSession),
            version: try hello.requiredString(WireKey.helloVersion))
    }

    private static func parseResponse(_ number: Int, _ payload: MessageObject) throws(MessageProblem) -> ServerMessage {
        guard let body = try payload.object(WireKey.body) else {
            throw .missingMember(payload.memberName(WireKey.body))
        }
        let status = ResponseStatus(rawValue: try body.requiredString(WireKey.status))
        let range = try body.required(WireKey.responseData)
        let data = try body.value(at: range, member: body.memberName(WireKey.responseData))
        if case .string(let text) = data {
            return .response(requestNumber: number, status: status, payload: .text(text))
        }
        return .response(requestNumber: number, status: status, payload: .json(data))
    }

    private static func parsePush(_ payload: MessageObject, limits: DataLimits) throws(MessageProblem) -> ServerMessage {
        let action = try payload.requiredString(WireKey.action)
        guard let body = try payload.object(WireKey.body) else {
            throw .missingMember(payload.memberName(WireKey.body))
        }
        guard action.utf8.allSatisfy({ $0 < 0x80 }) else { throw .unknownPushAction(action) }
        switch action {
        case WireKey.dataPush:
            let path = try pushPath(body, limits: limits)
            let range = try body.required(WireKey.data)
            let data: Node
            do {
                data = try JSONReader.readData(body.slice(range), depth: path.depth, limits: limits, maxBytes: Int.max).node
            } catch {
                throw .invalidData(
                    member: body.memberName(WireKey.data),
                    JSONError(offset: range.lowerBound + error.offset, reason: error.reason))
            }
            return .dataPush(path: path, data: data, tag: try body.integer(WireKey.tag))
        case WireKey.mergePush:
            let path = try pushPath(body, limits: limits)
            let range = try body.required(WireKey.data)
            guard body.isObject(range) else { throw .wrongType(member: body.memberName(WireKey.data), expected: .object) }
            let entries: [UpdateEntry]
            do {
                entries = try JSONReader.readUpdate(body.slice(range), depth: path.depth, limits: limits, maxBytes: Int.max)
            } catch {
                throw .invalidData(
                    member: body.memberName(WireKey.data),
                    JSONError(offset: range.lowerBound + error.offset, reason: error.reason))
            }
            let changes = entries.map { MergeChange(target: $0.target, node: $0.value.node) }
            return .mergePush(path: path, changes: changes, tag: try body.integer(WireKey.tag))
        case WireKey.listenRevoked:
            let path = try pushPath(body, limits: limits)
            guard let query = try body.value(WireKey.query) else { return .listenRevoked(path: path, query: nil) }
            guard case .array(let queries) = query, queries.count == 1, let only = queries.first, case .object = only
            else {
                throw .wrongType(member: body.memberName(WireKey.query), expected: .queryArray)
            }
            return .listenRevoked(path: path, query: only)
        case WireKey.authRevoked:
            return .authRevoked(
                status: ResponseStatus(rawValue: try body.requiredString(WireKey.revokeStatus)),
                reason: try body.requiredString(WireKey.revokeReason))
        case WireKey.appCheckRevoked:
            return .appCheckRevoked(
                status: ResponseStatus(rawValue: try body.requiredString(WireKey.revokeStatus)),
                reason: try body.requiredString(WireKey.revokeReason))
        case WireKey.securityDebug:
            return .securityDebug(message: try body.requiredString(WireKey.securityDebugMessage))
        default:
            throw .unknownPushAction(action)
        }
    }

    private static func pushPath(_ body: MessageObject, limits: DataLimits) throws(MessageProblem) -> Path {
        let text = try body.requiredString(WireKey.path)
        do {
            return try Path(text, limits: limits)
        } catch {
            throw .invalidPath(member: body.memberName(WireKey.path), error)
        }
    }
}
