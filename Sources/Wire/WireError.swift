import DataModel

/// Why frames or a message could not be turned into protocol values, or a message into frames.
///
/// How the gateway maps them (one place, see STYLE "Errors"):
/// - ``requestNumber`` is set (``unknownAction(requestNumber:action:)``,
///   ``malformedRequest(requestNumber:_:)``): answer that request with an error status and keep the connection —
///   the client's other requests and its neighbours are unaffected.
/// - ``unknownControlType(_:)``: ignore the message (the JS SDK logs unknown control types too).
/// - Everything else means the byte stream can no longer be trusted: send a control error and close.
public enum WireError: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: Frames

    /// A frame that looks like a frame count (digits, optionally signed) but announces no frames or a negative
    /// number (the offending text, at most 32 characters).
    case invalidFrameCount(String)
    /// A frame count above the limit; `announced` is `nil` when it has too many digits to represent.
    case tooManyFrames(announced: Int?, limit: Int)
    /// A message (one frame or reassembled from several) longer than the limit, in bytes.
    case messageTooLarge(limit: Int)
    /// An outbound message needs more frames than clients accept (iOS reads at most 4 count digits).
    case tooManyFramesToSend(needed: Int, limit: Int)

    // MARK: Messages

    /// The message is not JSON.
    case invalidJSON(JSONError)
    /// The message is JSON but not a valid envelope, and no request number could be read.
    case malformedMessage(MessageProblem)
    /// A control message of a type this server does not know.
    case unknownControlType(String)
    /// A request whose action this server does not know; answer it with an error status.
    case unknownAction(requestNumber: Int, action: String)
    /// A request with a known action but an invalid body; answer it with an error status.
    case malformedRequest(requestNumber: Int, MessageProblem)

    /// The request number to answer, when the message got far enough to have one.
    public var requestNumber: Int? {
        switch self {
        case .unknownAction(let number, _), .malformedRequest(let number, _): return number
        default: return nil
        }
    }

    /// A message for logs and for the `d` of an error response or control error.
    public var description: String {
        switch self {
        case .invalidFrameCount(let text): return "Invalid frame count \"\(text)\""
        case .tooManyFrames(let announced?, let limit):
            return "Frame count \(announced) exceeds the limit of \(limit)"
        case .tooManyFrames(nil, let limit): return "Frame count exceeds the limit of \(limit)"
        case .messageTooLarge(let limit): return "Message exceeds the limit of \(limit) bytes"
        case .tooManyFramesToSend(let needed, let limit):
            return "Message needs \(needed) frames; clients accept at most \(limit)"
        case .invalidJSON(let error): return error.description
        case .malformedMessage(let problem): return problem.description
        case .unknownControlType(let type): return "Unknown control message type \"\(type)\""
        case .unknownAction(_, let action): return "Unknown action \"\(action)\""
        case .malformedRequest(_, let problem): return problem.description
        }
    }
}

/// What is wrong inside a JSON message; members are named by their path from the envelope (`d.b.p`).
public enum MessageProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// A required member is absent.
    case missingMember(String)
    /// A member has the wrong JSON type (`""` names the message itself).
    case wrongType(member: String, expected: WireValueKind)
    /// The envelope's `t` is neither `"c"` nor `"d"`.
    case unknownLayer(String)
    /// A path member is not a valid Firebase path.
    case invalidPath(member: String, PathError)
    /// A data member is not valid Firebase data (offsets count from the start of the message).
    case invalidData(member: String, JSONError)
    /// A `.priority` write whose value is not a priority (null, number, string or server value).
    case invalidPriority(member: String)
    /// A query object the data model rejects.
    case invalidQuery(member: String, QueryError)
    /// An untagged listen with a query that filters: its pushes could not be told apart from the default listen's.
    case filteredQueryWithoutTag
    /// A server push with an action this client does not know (``ServerMessage/parse(_:limits:)``).
    case unknownPushAction(String)

    /// A human-readable message naming the member.
    public var description: String {
        switch self {
        case .missingMember(let member): return "Missing member \"\(member)\""
        case .wrongType(let member, let expected):
            return member.isEmpty ? "Message must be \(expected)" : "Member \"\(member)\" must be \(expected)"
        case .unknownLayer(let layer): return "Unknown message layer \"\(layer)\""
        case .invalidPath(let member, let error): return "Member \"\(member)\": \(error)"
        case .invalidData(let member, let error): return "Member \"\(member)\": \(error)"
        case .invalidPriority(let member): return "Member \"\(member)\" is not a valid priority"
        case .invalidQuery(let member, let error): return "Member \"\(member)\": \(error)"
        case .filteredQueryWithoutTag: return "A filtered query needs a tag"
        case .unknownPushAction(let action): return "Unknown push action \"\(action)\""
        }
    }
}

/// The JSON shape a member was expected to have.
public enum WireValueKind: Sendable, Equatable, CustomStringConvertible {
    /// A JSON object.
    case object
    /// A JSON string.
    case string
    /// An integer (a JSON number without fraction within ±2^53, or a string of decimal digits).
    case integer
    /// `true` or `false`.
    case boolean
    /// An array of strings.
    case stringArray
    /// An array holding one query object (a listen revocation's `q`).
    case queryArray

    /// The kind with an article, for messages.
    public var description: String {
        switch self {
        case .object: return "an object"
        case .string: return "a string"
        case .integer: return "an integer"
        case .boolean: return "a boolean"
        case .stringArray: return "an array of strings"
        case .queryArray: return "an array with one query object"
        }
    }
}
