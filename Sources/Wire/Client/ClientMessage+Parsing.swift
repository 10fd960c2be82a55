import DataModel

extension ClientMessage {
    /// Parses one complete client message (the output of ``FrameAssembler``).
    ///
    /// Accepts the spellings of all three SDKs: paths with or without leading slash (§6), `sin`/`ein` present or
    /// absent and the `[MIN_NAME]`/`[MAX_NAME]`/`[MAX_KEY]` sentinels (§7, via ``QueryParams/init(wireObject:)``),
    /// `unappeck` and `unappcheck`, the legacy `l`/`u` listen aliases, request numbers and tags as numbers or digit
    /// strings, and `null` for any optional member. Unknown members are ignored.
    ///
    /// - Parameters:
    ///   - bytes: the message's UTF-8 JSON text.
    ///   - limits: key, depth and string limits for paths and written data.
    /// - Throws: ``WireError``; once the request number is known, errors carry it (see ``WireError/requestNumber``).
    public static func parse(_ bytes: [UInt8], limits: DataLimits = .default) throws(WireError) -> ClientMessage {
        let result: Result<ClientMessage, WireError> = bytes.withUnsafeBytes { raw in
            do throws(WireError) { return .success(try parse(raw, limits: limits)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one complete client message from raw bytes (see ``parse(_:limits:)``).
    public static func parse(_ bytes: UnsafeRawBufferPointer, limits: DataLimits = .default) throws(WireError)
        -> ClientMessage
    {
        if let write = frequentWrite(bytes, limits: limits) { return write }
        return try parseAnyMessage(bytes, limits: limits)
    }

    /// Parses any client message member by member (``parse(_:limits:)`` without its shortcut for a frequent write).
    static func parseAnyMessage(_ bytes: UnsafeRawBufferPointer, limits: DataLimits) throws(WireError)
        -> ClientMessage
    {
        let maxNesting = max(JSONReader.defaultMaxNesting, limits.maxDepth * 2 + 8)
        let envelope = try readEnvelope(bytes, maxNesting: maxNesting)
        let layer: String
        let payload: MessageObject
        do throws(MessageProblem) {
            guard let text = try envelope.string(WireKey.layer) else { throw .missingMember(WireKey.layer) }
            layer = text
            guard let object = try envelope.object(WireKey.payload) else { throw .missingMember(WireKey.payload) }
            payload = object
        } catch {
            throw .malformedMessage(error)
        }
        if sameBytes(layer, equalTo: WireKey.controlLayer) { return .control(try parseControl(payload)) }
        guard sameBytes(layer, equalTo: WireKey.dataLayer) else { throw .malformedMessage(.unknownLayer(layer)) }
        return .request(try parseRequest(payload, limits: limits))
    }

    /// The top-level object, telling JSON that is not an object apart from text that is not JSON.
    static func readEnvelope(_ bytes: UnsafeRawBufferPointer, maxNesting: Int) throws(WireError)
        -> MessageObject
    {
        do {
            return try MessageObject(message: bytes, range: 0..<bytes.count, name: "", maxNesting: maxNesting)
        } catch {
            // MessageObject reports every failure as "not an object"; find out whether the text is JSON at all.
            do {
                _ = try JSONReader.readValue(bytes, maxNesting: maxNesting, maxBytes: Int.max)
            } catch {
                throw .invalidJSON(error)
            }
            throw .malformedMessage(.wrongType(member: "", expected: .object))
        }
    }

    private static func parseControl(_ payload: MessageObject) throws(WireError) -> ClientControl {
        let type: String
        do {
            type = try payload.requiredString(WireKey.controlType)
        } catch {
            throw .malformedMessage(error)
        }
        if sameBytes(type, equalTo: WireKey.ping) { return .ping }
        if sameBytes(type, equalTo: WireKey.switchAck) { return .switchAck }
        if sameBytes(type, equalTo: WireKey.endOfTransmission) { return .endOfTransmission }
        throw .unknownControlType(type)
    }

    private static func parseRequest(_ payload: MessageObject, limits: DataLimits) throws(WireError) -> ClientRequest {
        let number: Int
        do throws(MessageProblem) {
            guard let value = try payload.integer(WireKey.requestNumber) else {
                throw .missingMember(payload.memberName(WireKey.requestNumber))
            }
            number = value
        } catch {
            throw .malformedMessage(error)
        }
        let action: ClientAction?
        let name: String
        do {
            name = try payload.requiredString(WireKey.action)
            let body =
                try payload.object(WireKey.body)
                ?? MessageObject(
                    emptyIn: payload.message, name: payload.memberName(WireKey.body), maxNesting: payload.maxNesting)
            action = try RequestBodyParser(body: body, limits: limits).action(named: name)
        } catch {
            throw .malformedRequest(requestNumber: number, error)
        }
        guard let action else { throw .unknownAction(requestNumber: number, action: name) }
        return ClientRequest(number: number, action: action)
    }

    /// Byte equality for protocol keywords (never Unicode canonical equivalence).
    static func sameBytes(_ text: String, equalTo keyword: String) -> Bool {
        text.utf8.elementsEqual(keyword.utf8)
    }
}
