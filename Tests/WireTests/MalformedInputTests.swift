import DataModel
import Testing
import Wire

@Suite("Malformed client messages")
struct MalformedInputTests {
    private func error(_ text: String) -> WireError? {
        do {
            let message = try ClientMessage.parse(bytes(text))
            Issue.record("parsed as \(message)")
            return nil
        } catch {
            return error
        }
    }

    /// UTF-8 offset of the first occurrence of `needle` in `text`.
    private func offset(of needle: String, in text: String) -> Int {
        let haystack = Array(text.utf8)
        let pattern = Array(needle.utf8)
        return (0...(haystack.count - pattern.count)).first { Array(haystack[$0..<($0 + pattern.count)]) == pattern } ?? -1
    }

    @Test("envelope problems, before a request number is known", arguments: [
        ("[1,2]", WireError.malformedMessage(.wrongType(member: "", expected: .object))),
        ("5", .malformedMessage(.wrongType(member: "", expected: .object))),
        (#""x""#, .malformedMessage(.wrongType(member: "", expected: .object))),
        ("{}", .malformedMessage(.missingMember("t"))),
        (#"{"t":"d"}"#, .malformedMessage(.missingMember("d"))),
        (#"{"t":1,"d":{}}"#, .malformedMessage(.wrongType(member: "t", expected: .string))),
        (#"{"t":"x","d":{}}"#, .malformedMessage(.unknownLayer("x"))),
        (#"{"t":"d","d":5}"#, .malformedMessage(.wrongType(member: "d", expected: .object))),
        (#"{"t":"d","d":{"a":"q","b":{}}}"#, .malformedMessage(.missingMember("d.r"))),
        (#"{"t":"d","d":{"r":true,"a":"q"}}"#, .malformedMessage(.wrongType(member: "d.r", expected: .integer))),
        (#"{"t":"d","d":{"r":1.5,"a":"q"}}"#, .malformedMessage(.wrongType(member: "d.r", expected: .integer))),
        (#"{"t":"d","d":{"r":"1x","a":"q"}}"#, .malformedMessage(.wrongType(member: "d.r", expected: .integer))),
        (#"{"t":"d","d":{"r":1e300,"a":"q"}}"#, .malformedMessage(.wrongType(member: "d.r", expected: .integer))),
        (#"{"t":"c","d":{"d":{}}}"#, .malformedMessage(.missingMember("d.t"))),
        (#"{"t":"c","d":{"t":"z","d":{}}}"#, .unknownControlType("z")),
    ])
    func envelopeProblems(input: String, expected: WireError) {
        let error = error(input)
        #expect(error == expected)
        #expect(error?.requestNumber == nil)
    }

    @Test("request problems carry the request number so the gateway can answer", arguments: [
        (#"{"t":"d","d":{"r":3,"b":{}}}"#, WireError.malformedRequest(requestNumber: 3, .missingMember("d.a"))),
        (#"{"t":"d","d":{"r":3,"a":7}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.a", expected: .string))),
        (#"{"t":"d","d":{"r":3,"a":"zz","b":{}}}"#, .unknownAction(requestNumber: 3, action: "zz")),
        (#"{"t":"d","d":{"r":0,"a":"é","b":{}}}"#, .unknownAction(requestNumber: 0, action: "é")),
        (#"{"t":"d","d":{"r":3,"a":"q","b":[]}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.b", expected: .object))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{}}}"#, .malformedRequest(requestNumber: 3, .missingMember("d.b.p"))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":5}}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.b.p", expected: .string))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a.b"}}}"#, .malformedRequest(requestNumber: 3, .invalidPath(member: "d.b.p", .invalidKey("a.b")))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","t":"x"}}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.b.t", expected: .integer))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","q":{"l":2,"vf":"r"}}}}"#, .malformedRequest(requestNumber: 3, .filteredQueryWithoutTag)),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","q":[],"t":1}}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.b.q", expected: .object))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","q":{"l":0},"t":1}}}"#, .malformedRequest(requestNumber: 3, .invalidQuery(member: "d.b.q", .invalidLimit))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","q":{"i":".key","sp":5},"t":1}}}"#, .malformedRequest(requestNumber: 3, .invalidQuery(member: "d.b.q", .invalidBound("sp")))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","h":5}}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.b.h", expected: .string))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","ch":{"hs":[]}}}}"#, .malformedRequest(requestNumber: 3, .missingMember("d.b.ch.ps"))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","ch":{"ps":[1],"hs":[]}}}}"#, .malformedRequest(requestNumber: 3, .wrongType(member: "d.b.ch.ps", expected: .stringArray))),
        (#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","ch":{"ps":["/a$"],"hs":[]}}}}"#, .malformedRequest(requestNumber: 3, .invalidPath(member: "d.b.ch.ps", .invalidKey("a$")))),
        (#"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a"}}}"#, .malformedRequest(requestNumber: 4, .missingMember("d.b.d"))),
        (#"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a","d":{"x":1},"h":5}}}"#, .malformedRequest(requestNumber: 4, .wrongType(member: "d.b.h", expected: .string))),
        (#"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a/.priority","d":{"x":1}}}}"#, .malformedRequest(requestNumber: 4, .invalidPriority(member: "d.b.d"))),
        (#"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a/.priority","d":true}}}"#, .malformedRequest(requestNumber: 4, .invalidPriority(member: "d.b.d"))),
        (#"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a/.value","d":1}}}"#, .malformedRequest(requestNumber: 4, .invalidPath(member: "d.b.p", .invalidKey(".value")))),
        (#"{"t":"d","d":{"r":5,"a":"m","b":{"p":"/a","d":5}}}"#, .malformedRequest(requestNumber: 5, .wrongType(member: "d.b.d", expected: .object))),
        (#"{"t":"d","d":{"r":5,"a":"m","b":{"p":"/a","d":null}}}"#, .malformedRequest(requestNumber: 5, .wrongType(member: "d.b.d", expected: .object))),
        (#"{"t":"d","d":{"r":5,"a":"om","b":{"p":"/a/.priority","d":{}}}}"#, .malformedRequest(requestNumber: 5, .invalidPath(member: "d.b.p", .invalidKey(".priority")))),
        (#"{"t":"d","d":{"r":6,"a":"auth","b":{}}}"#, .malformedRequest(requestNumber: 6, .missingMember("d.b.cred"))),
        (#"{"t":"d","d":{"r":6,"a":"auth","b":{"cred":"x","authvar":[1]}}}"#, .malformedRequest(requestNumber: 6, .wrongType(member: "d.b.authvar", expected: .object))),
        (#"{"t":"d","d":{"r":6,"a":"gauth","b":{"cred":"x","noauth":"yes"}}}"#, .malformedRequest(requestNumber: 6, .wrongType(member: "d.b.noauth", expected: .boolean))),
        (#"{"t":"d","d":{"r":7,"a":"appcheck","b":{}}}"#, .malformedRequest(requestNumber: 7, .missingMember("d.b.token"))),
        (#"{"t":"d","d":{"r":8,"a":"g","b":{"p":"/a","q":"x"}}}"#, .malformedRequest(requestNumber: 8, .wrongType(member: "d.b.q", expected: .object))),
        (#"{"t":"d","d":{"r":9,"a":"oc","b":{}}}"#, .malformedRequest(requestNumber: 9, .missingMember("d.b.p"))),
    ])
    func requestProblems(input: String, expected: WireError) {
        let error = error(input)
        #expect(error == expected)
        #expect(error?.requestNumber == expected.requestNumber)
        #expect(error?.requestNumber != nil)
    }

    @Test("invalid data names the member and the absolute offset of the problem")
    func invalidData() {
        let key = #"{"t":"d","d":{"r":4,"a":"p","b":{"p":"/a","d":{"b.c":1}}}}"#
        #expect(
            error(key)
                == .malformedRequest(
                    requestNumber: 4,
                    .invalidData(
                        member: "d.b.d",
                        JSONError(offset: offset(of: #""b.c""#, in: key), reason: .invalidData(.invalidKey(.invalidKey("b.c")))))))
        let overlap = #"{"t":"d","d":{"r":5,"a":"m","b":{"p":"/a","d":{"x":1,"x/y":2}}}}"#
        #expect(
            error(overlap)
                == .malformedRequest(
                    requestNumber: 5,
                    .invalidData(
                        member: "d.b.d",
                        JSONError(offset: offset(of: "2}", in: overlap), reason: .invalidData(.overlappingUpdatePaths("x", "x/y"))))))
        let serverValue = #"{"t":"d","d":{"r":6,"a":"p","b":{"p":"/a","d":{".sv":"later"}}}}"#
        #expect(
            error(serverValue)
                == .malformedRequest(
                    requestNumber: 6,
                    .invalidData(
                        member: "d.b.d",
                        JSONError(offset: offset(of: #""later""#, in: serverValue), reason: .invalidData(.unknownServerValue)))))
    }

    @Test("text that is not JSON is rejected with the reader's error")
    func notJSON() {
        #expect(error(#"{"t":"d""#) == .invalidJSON(JSONError(offset: 8, reason: .unexpectedEnd)))
        #expect(error(#"{"t":"c","d":{"t":"p","d":{}}}x"#) == .invalidJSON(JSONError(offset: 30, reason: .trailingCharacters)))
        #expect(error("") == .invalidJSON(JSONError(offset: 0, reason: .unexpectedEnd)))
        do {
            _ = try ClientMessage.parse([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])
            Issue.record("invalid UTF-8 parsed")
        } catch {
            guard case .invalidJSON(let error) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(error.reason == .invalidUTF8)
        }
    }

    @Test("nesting beyond the limit is rejected, not recursed into")
    func deepNesting() {
        let deep = #"{"t":"d","d":{"r":1,"a":"s","b":{"c":"# + String(repeating: "[", count: 10_000)
            + String(repeating: "]", count: 10_000) + "}}}"
        guard case .invalidJSON(let error)? = error(deep), case .nestingTooDeep = error.reason else {
            Issue.record("deep nesting was not rejected as such")
            return
        }
    }

    @Test("a repeated member keeps its last value, as JSON.parse does")
    func repeatedMembers() throws {
        #expect(try ClientMessage.parse(bytes(#"{"t":"x","t":"c","d":{"t":"p","d":{}}}"#)) == .control(.ping))
    }

    @Test("errors describe themselves with the member's path")
    func descriptions() {
        #expect(WireError.malformedRequest(requestNumber: 3, .missingMember("d.b.p")).description == #"Missing member "d.b.p""#)
        #expect(WireError.unknownAction(requestNumber: 3, action: "zz").description == #"Unknown action "zz""#)
        #expect(WireError.malformedMessage(.wrongType(member: "", expected: .object)).description == "Message must be an object")
        #expect(WireError.tooManyFrames(announced: nil, limit: 9999).description == "Frame count exceeds the limit of 9999")
    }
}

@Suite("Malformed server messages")
struct MalformedServerMessageTests {
    @Test("unknown and malformed server messages are errors", arguments: [
        (#"{"t":"d","d":{"a":"zz","b":{}}}"#, WireError.malformedMessage(.unknownPushAction("zz"))),
        (#"{"t":"c","d":{"t":"q","d":{}}}"#, .unknownControlType("q")),
        (#"{"t":"c","d":{"t":"h","d":{"v":"5","h":"x","s":"y"}}}"#, .malformedMessage(.missingMember("d.d.ts"))),
        (#"{"t":"d","d":{"r":1,"b":{"s":"ok"}}}"#, .malformedMessage(.missingMember("d.b.d"))),
        (#"{"t":"d","d":{"a":"c","b":{"p":"/a","q":{"l":1}}}}"#, .malformedMessage(.wrongType(member: "d.b.q", expected: .queryArray))),
        (#"{"t":"d","d":{"a":"d","b":{"d":1}}}"#, .malformedMessage(.missingMember("d.b.p"))),
        (#"{"t":"d","d":{"a":"m","b":{"p":"/a","d":[1]}}}"#, .malformedMessage(.wrongType(member: "d.b.d", expected: .object))),
    ])
    func serverProblems(input: String, expected: WireError) {
        #expect(throws: expected) { try ServerMessage.parse(bytes(input)) }
    }
}
