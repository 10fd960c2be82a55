// libFuzzer entry for HTTPRequestParser; built by `scripts/fuzz HTTPRequestParserFuzz`, which compiles this
// file together with Sources/Primitives and Sources/HTTP1 as one module (so there is no `import HTTP1` here).
//
// Each input is parsed three ways (whole, split at a point derived from the input, and one byte at a time
// for inputs up to 512 bytes) and the three must yield identical events and leftovers. Any crash, sanitizer
// report, or disagreement (reported by trapping) is a finding. Small limits make every limit path reachable.

/// Limits small enough for short inputs to cross each of them.
private let fuzzLimits = HTTPLimits(maxRequestLineBytes: 96, maxHeaderBytes: 192, maxBodyBytes: 256, maxHeaderCount: 6)

/// Events and leftover bytes from feeding `pieces` in order, asking for events after each piece.
private func parse(_ pieces: [UnsafeRawBufferPointer]) -> ([HTTPParserEvent], [UInt8]) {
    var parser = HTTPRequestParser(limits: fuzzLimits)
    var events: [HTTPParserEvent] = []
    for piece in pieces {
        parser.feed(piece)
        while let event = parser.next() {
            events.append(event)
            // Exercise the response side with whatever the parser produced.
            switch event {
            case .failure(let error):
                _ = HTTPResponse.error(error.status, message: error.message).encoded()
            case .request(let request):
                _ = HTTPResponse(status: .ok, headers: request.head.headers, body: request.body).encoded()
                _ = HTTPChunkedEncoding.encodeChunk(request.body)
            case .expectContinue(let head):
                _ = HTTPResponse.error(.badRequest, message: head.target).encoded()
            }
        }
        _ = parser.hasPartialRequest
    }
    return (events, parser.takeUnparsedBytes())
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let whole = parse([input])

    let split = size == 0 ? 0 : Int(data[size - 1]) * size / 256
    let halves = parse([UnsafeRawBufferPointer(rebasing: input[..<split]), UnsafeRawBufferPointer(rebasing: input[split...])])
    if halves.0 != whole.0 || halves.1 != whole.1 {
        fatalError("split at \(split) of \(size) bytes disagrees with whole input")
    }

    if size <= 512 {
        let bytes = (0..<size).map { UnsafeRawBufferPointer(rebasing: input[$0..<($0 + 1)]) }
        let dripped = parse(bytes)
        if dripped.0 != whole.0 || dripped.1 != whole.1 {
            fatalError("byte-at-a-time feeding disagrees with whole input")
        }
    }

    // Consumed bytes plus leftovers must add up: the leftover is always a suffix of the input.
    if !whole.1.isEmpty && !input.suffix(whole.1.count).elementsEqual(whole.1) {
        fatalError("unparsed bytes are not a suffix of the input")
    }
    return 0
}
