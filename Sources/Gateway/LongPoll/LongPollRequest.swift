import Primitives
import Wire

/// One request of the long-poll transport, read from its query string (long-polling.md §1). Treats the query as
/// hostile: bounded numbers, bounded counts, no allocation beyond the query's own size.
struct LongPollRequest: Equatable {
    /// What the request asks for.
    enum Kind: Equatable {
        /// `start=t`: a new session, with the `/.ws` parameters and the page's callback number (§2).
        case start(ConnectionParameters, callback: String?)
        /// A poll, carrying segments of the client's messages (§3, §4), or why they cannot be read (which ends
        /// the session the credentials name).
        case poll(Credentials, segments: Result<[LongPollSegment], LongPollRequestError>)
        /// `dframe=t`: the page that reports the page's unloading (§6).
        case disconnectFrame(Credentials)
        /// `disconn=t`: the page is leaving (§6).
        case disconnect(Credentials)
    }

    /// A session's `id` and `pw`.
    struct Credentials: Equatable {
        var id: String
        var password: String
    }

    var kind: Kind

    /// Most segments one request may carry (the SDK fits a few dozen in a URL).
    static let maxSegmentsPerRequest = 100
    /// Most segments one message may have: a 16 MiB message in base64, 1,840 characters a segment, fits.
    static let maxSegmentsPerMessage = 20_000
    /// Segment numbers stay below this (2^53, JavaScript's exact integers).
    static let maxSegmentNumber = 9_007_199_254_740_992

    /// Reads `query` (the part of the target after `?`).
    static func parse(query: String) throws(LongPollRequestError) -> LongPollRequest {
        var fields: [String: String] = [:]
        var pieces: [Int: (number: String?, count: String?, data: String?)] = [:]
        // Segment problems are kept for later: with the credentials read, they end the session they name.
        var segmentProblem: LongPollRequestError?
        for pair in query.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentDecoding.decode(parts[0])
            let value = parts.count > 1 ? PercentDecoding.decode(parts[1]) : ""
            switch segmentField(name) {
            case nil:
                fields[name] = value
            case .failure(let problem):
                segmentProblem = segmentProblem ?? problem
            case .success(let (field, index)):
                guard pieces[index] != nil || pieces.count < maxSegmentsPerRequest else {
                    segmentProblem = segmentProblem ?? .invalid("more than \(maxSegmentsPerRequest) segments in one request")
                    continue
                }
                var piece = pieces[index] ?? (nil, nil, nil)
                switch field {
                case "seg": piece.number = value
                case "ts": piece.count = value
                default: piece.data = value
                }
                pieces[index] = piece
            }
        }
        if fields["start"] != nil {
            let callback = fields["cb"]
            if let callback, callback.isEmpty || callback.utf8.count > 16 || !callback.utf8.allSatisfy(isDigit) {
                throw .invalid("cb must be a callback number")
            }
            return LongPollRequest(kind: .start(ConnectionParameters(query: query), callback: callback))
        }
        guard let id = fields["id"], let password = fields["pw"] else {
            throw .invalid("a long-poll request needs start=t, or a session's id and pw")
        }
        let credentials = Credentials(id: id, password: password)
        if fields["dframe"] != nil { return LongPollRequest(kind: .disconnectFrame(credentials)) }
        if fields["disconn"] != nil { return LongPollRequest(kind: .disconnect(credentials)) }
        if let segmentProblem { return LongPollRequest(kind: .poll(credentials, segments: .failure(segmentProblem))) }
        return LongPollRequest(kind: .poll(credentials, segments: Result { () throws(LongPollRequestError) in
            try segments(pieces)
        }))
    }

    /// The segments of a request, in index order.
    private static func segments(
        _ pieces: [Int: (number: String?, count: String?, data: String?)]
    ) throws(LongPollRequestError) -> [LongPollSegment] {
        var segments: [LongPollSegment] = []
        segments.reserveCapacity(pieces.count)
        for (index, piece) in pieces.sorted(by: { $0.key < $1.key }) {
            guard let numberText = piece.number, let countText = piece.count, let data = piece.data else {
                throw .invalid("segment \(index) needs seg\(index), ts\(index) and d\(index)")
            }
            guard let number = decimal(numberText), number < maxSegmentNumber else {
                throw .invalid("seg\(index) must be a segment number, not \"\(numberText.prefix(24))\"")
            }
            guard let count = decimal(countText), (1...maxSegmentsPerMessage).contains(count) else {
                throw .invalid("ts\(index) must be a segment count of 1…\(maxSegmentsPerMessage), not \"\(countText.prefix(24))\"")
            }
            segments.append(LongPollSegment(number: number, count: count, data: Array(data.utf8)))
        }
        return segments
    }

    /// `seg<i>`, `ts<i>` or `d<i>` with its index (at most 3 digits), a
    /// problem for such a name with a larger index, or `nil` for any other name.
    private static func segmentField(_ name: String) -> Result<(String, Int), LongPollRequestError>? {
        for field in ["seg", "ts", "d"] where name.hasPrefix(field) {
            let digits = name.utf8.dropFirst(field.utf8.count)
            guard !digits.isEmpty, digits.allSatisfy(isDigit) else { continue }
            guard digits.count <= 3, let index = Int(Substring(digits)) else {
                return .failure(.invalid("segment index of \(name.prefix(24)) is too large (at most 999)"))
            }
            return .success((field, index))
        }
        return nil
    }

    /// A non-negative decimal of at most 16 digits.
    private static func decimal(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 16, text.utf8.allSatisfy(isDigit) else { return nil }
        return Int(text)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}

/// One piece of a client message: its number in the session, its message's segment count, its base64 text.
struct LongPollSegment: Equatable {
    var number: Int
    var count: Int
    var data: [UInt8]
}

/// Why a long-poll request or its segments cannot be taken; the text goes to the client.
enum LongPollRequestError: Error, Equatable, CustomStringConvertible {
    case invalid(String)

    var description: String {
        switch self {
        case .invalid(let text): return text
        }
    }
}
