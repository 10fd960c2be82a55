import HTTP1
import Testing

/// What a parser produced for one way of feeding it: the events in order and the bytes left unparsed.
struct ParseRun: Equatable, CustomStringConvertible {
    var events: [HTTPParserEvent]
    var unparsed: [UInt8]

    var description: String { "events: \(events), unparsed: \(unparsed.count) bytes" }
}

/// The bytes of `text` (tests write requests as strings with explicit `\r\n`).
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Feeds `pieces` one after another into a fresh parser, draining events after each piece.
///
/// With `stopAfterRequests`, no more events are asked for once that many requests came out, as a server
/// does after an upgrade; the remaining pieces are still fed, and end up in ``ParseRun/unparsed``.
func run(_ pieces: [[UInt8]], limits: HTTPLimits = .init(), stopAfterRequests: Int? = nil) -> ParseRun {
    var parser = HTTPRequestParser(limits: limits)
    var events: [HTTPParserEvent] = []
    var requests = 0
    for piece in pieces {
        parser.feed(piece)
        while requests != stopAfterRequests, let event = parser.next() {
            events.append(event)
            if case .request = event { requests += 1 }
        }
    }
    return ParseRun(events: events, unparsed: parser.takeUnparsedBytes())
}

/// Parses `input` whole, one byte at a time and split in two at every point, expects all runs to agree,
/// and returns the run for the whole input.
@discardableResult
func dripFeed(
    _ input: [UInt8], limits: HTTPLimits = .init(), stopAfterRequests: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ParseRun {
    let whole = run([input], limits: limits, stopAfterRequests: stopAfterRequests)
    let byteByByte = run(input.map { [$0] }, limits: limits, stopAfterRequests: stopAfterRequests)
    #expect(byteByByte == whole, "one byte at a time", sourceLocation: sourceLocation)
    for split in 0...input.count {
        let pieces = [Array(input[..<split]), Array(input[split...])]
        let splitRun = run(pieces, limits: limits, stopAfterRequests: stopAfterRequests)
        if splitRun != whole {
            Issue.record("split at \(split) gave \(splitRun), whole gave \(whole)", sourceLocation: sourceLocation)
            break
        }
    }
    return whole
}

/// ``dripFeed(_:limits:stopAfterRequests:sourceLocation:)`` for a request written as a string.
@discardableResult
func dripFeed(
    _ input: String, limits: HTTPLimits = .init(), stopAfterRequests: Int? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ParseRun {
    dripFeed(bytes(input), limits: limits, stopAfterRequests: stopAfterRequests, sourceLocation: sourceLocation)
}

/// The requests among `events`, failing the test if any other event is present.
func requests(
    _ run: ParseRun, sourceLocation: SourceLocation = #_sourceLocation
) -> [HTTPRequest] {
    run.events.compactMap { event in
        guard case .request(let request) = event else {
            Issue.record("unexpected event \(event)", sourceLocation: sourceLocation)
            return nil
        }
        return request
    }
}

/// The single failure a run ended with, or nil if it did not end with exactly one failure.
func failure(_ run: ParseRun) -> HTTPParseError? {
    guard case .failure(let error)? = run.events.last else { return nil }
    let failures = run.events.filter { if case .failure = $0 { true } else { false } }
    return failures.count == 1 ? error : nil
}
