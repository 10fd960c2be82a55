// libFuzzer entry for the long-poll transport's request decoder and segment reassembly (Sources/Gateway/LongPoll,
// long-polling.md §1, §3); built by `scripts/fuzz LongPollFuzz`, which compiles this file together with
// Sources/Primitives, Sources/DataModel, Sources/Wire and the two LongPoll files as one module.
//
// The first input byte chooses a mode:
// - even: the rest is a session's requests, one query string per line, decoded as the server decodes them; the
//   segments of every poll go through one reassembler with a small message limit, as one session's would. Errors
//   must be LongPollRequestError; every message it completes must fit the limit; segment numbers only move forward.
// - odd: the rest is one message, encoded as the SDK encodes it (web-safe base64, `.` padding, segments of a size
//   the second byte chooses), whose segments are then sent in an order, with repeats, that the following bytes
//   choose (never more than the reassembler may hold waiting). The reassembler must give the message back, once.
// Any crash, sanitizer report or broken invariant (reported by trapping) is a finding.

/// A message limit small enough for short inputs to cross it.
private let maxMessageBytes = 512

private func decodeRequests(_ body: [UInt8]) {
    var reassembler = SegmentReassembler(maxMessageBytes: maxMessageBytes)
    for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        let query = String(decoding: line, as: UTF8.self)
        let request: LongPollRequest
        do {
            request = try LongPollRequest.parse(query: query)
        } catch {
            _ = error.description
            continue
        }
        guard case .poll(_, let segments) = request.kind, case .success(let list) = segments else { continue }
        precondition(list.count <= LongPollRequest.maxSegmentsPerRequest, "too many segments taken")
        let before = reassembler.nextSegment
        do {
            for message in try reassembler.receive(list) {
                precondition(message.count <= maxMessageBytes + 2, "a message over the limit: \(message.count)")
            }
        } catch {
            _ = error.description
            return  // the server ends the session here
        }
        precondition(reassembler.nextSegment >= before, "segment numbers went back")
    }
}

private func roundTrip(_ body: [UInt8]) {
    guard body.count >= 2 else { return }
    let segmentSize = Int(body[0] % 16) * 4 + 4
    let order = body[1...].prefix(32)
    let message = Array(body.dropFirst(1 + order.count).prefix(maxMessageBytes))
    var text = Array(Base64.encode(message).utf8)
    for index in text.indices {
        switch text[index] {
        case UInt8(ascii: "+"): text[index] = UInt8(ascii: "-")
        case UInt8(ascii: "/"): text[index] = UInt8(ascii: "_")
        case UInt8(ascii: "="): text[index] = UInt8(ascii: ".")
        default: break
        }
    }
    let pieces = stride(from: 0, to: max(text.count, 1), by: segmentSize).map {
        Array(text[$0..<min($0 + segmentSize, text.count)])
    }
    let segments = pieces.enumerated().map { LongPollSegment(number: 100 + $0.offset, count: pieces.count, data: $0.element) }
    // Earlier sessions' segments (numbers 0…99) were taken before: start the reassembler past them.
    var reassembler = SegmentReassembler(maxMessageBytes: maxMessageBytes)
    let earlier = (0..<100).map { LongPollSegment(number: $0, count: 1, data: Array("e30.".utf8)) }
    guard (try? reassembler.receive(earlier))?.count == 100 else { preconditionFailure("earlier messages lost") }
    // Send the segments in the order the bytes choose, with repeats, keeping the waiting ones within the limit.
    var remaining = segments
    var sent: [LongPollSegment] = []
    var received: [[UInt8]] = []
    for choice in order where !remaining.isEmpty {
        let window = min(remaining.count, SegmentReassembler.maxWaitingSegments)
        let pick = Int(choice) % (window + 1)
        let segment = pick < window ? remaining.remove(at: pick) : (sent.last ?? remaining.removeFirst())
        sent.append(segment)
        guard let messages = try? reassembler.receive([segment]) else { preconditionFailure("a valid segment refused") }
        received += messages
        if !received.isEmpty, !remaining.isEmpty {
            preconditionFailure("message completed before all its segments arrived")
        }
    }
    guard let rest = try? reassembler.receive(remaining + sent) else { preconditionFailure("valid segments refused") }
    received += rest
    precondition(received.count == 1, "the message came out \(received.count) times")
    precondition(received[0] == message, "the message came out changed")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func longPollFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] % 2 == 0 { decodeRequests(body) } else { roundTrip(body) }
    return 0
}
