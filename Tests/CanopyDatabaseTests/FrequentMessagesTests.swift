@testable import CanopyDatabase
import DataModel
import Testing
import TestSupport
import Wire

/// The exact-bytes recognizer of acknowledgements and data pushes agrees with the general parser on everything it
/// takes, and takes the two messages as the server writes them.
@Suite("Frequent messages")
struct FrequentMessagesTests {
    static func node(_ json: String) throws -> Node {
        try JSONReader.readData(Array(json.utf8)).node
    }

    /// Messages as the server encodes them.
    static func serverMessages() throws -> [ServerMessage] {
        var messages: [ServerMessage] = []
        for number in [0, 1, 9, 10, 128, 123_456_789, 999_999_999_999_999] {
            messages.append(.response(requestNumber: number, status: .ok, payload: .text("")))
        }
        messages.append(.response(requestNumber: 5, status: .ok, payload: .json(.object([]))))
        messages.append(.response(requestNumber: 6, status: .permissionDenied, payload: .text("Permission denied")))
        messages.append(.response(requestNumber: 7, status: .ok, payload: .text("x")))
        for (path, data) in [("/", #"{"a":1}"#), ("/rooms/r1", #"{"title":"Lobby","n":[1,2]}"#),
                             ("/a/b/c", #""text with \"quotes\" and \\ slashes""#), ("/x", "3.5"), ("/y", "true"),
                             ("/é/ü", #"{"ключ":"значение"}"#), ("/z", "null")]
        {
            messages.append(.dataPush(path: try Path(path), data: try Self.node(data), tag: nil))
            messages.append(.dataPush(path: try Path(path), data: try Self.node(data), tag: 3))
        }
        messages.append(.mergePush(path: try Path("/m"), changes: [MergeChange(target: .node(try Path("k")),
                                                                                  node: try Self.node("1"))],
                                   tag: nil))
        messages.append(.handshake(Handshake(timestamp: 1, host: "h", sessionID: "s", version: "5")))
        return messages
    }

    @Test("the server's acknowledgements and untagged data pushes are recognized, and read as the parser reads them")
    func recognizesServerMessages() throws {
        var frequent = FrequentMessages()
        for message in try Self.serverMessages() {
            let bytes = message.encoded()
            let general = try ServerMessage.parse(bytes)
            let recognized = frequent.parse(bytes)
            switch message {
            case .response(_, .ok, .text("")), .dataPush(_, _, nil):
                #expect(recognized == general, "\(String(decoding: bytes, as: UTF8.self))")
            default:
                #expect(recognized == nil, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    @Test("lookalikes are left to the general parser", arguments: [
        #"{"t":"d","d":{"r":01,"b":{"s":"ok","d":""}}}"#,
        #"{"t":"d","d":{"r":,"b":{"s":"ok","d":""}}}"#,
        #"{"t":"d","d":{"r":-1,"b":{"s":"ok","d":""}}}"#,
        #"{"t":"d","d":{"r":1234567890123456,"b":{"s":"ok","d":""}}}"#,
        #"{"t":"d","d":{"r":1 ,"b":{"s":"ok","d":""}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a\"b","d":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a","d":1,"t":2}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a","d":{"k":}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a","d":}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a","x":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a.b","d":1}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/a"}}}"#,
    ])
    func leavesLookalikes(_ text: String) {
        var frequent = FrequentMessages()
        #expect(frequent.parse(Array(text.utf8)) == nil)
    }

    @Test("whatever bytes it takes, it reads as the general parser does (one recognizer throughout, its path memory too)")
    func agreesOnMutations() throws {
        var frequent = FrequentMessages()
        var generator = SplitMix64(seed: 27)
        let samples = try Self.serverMessages().map { $0.encoded() }
        let alphabet = Array(#"0123456789{}[]",:\ "adrbstpok/x.-"#.utf8)
        var recognized = 0
        for _ in 0..<20_000 {
            var bytes = samples[Int(generator.next() % UInt64(samples.count))]
            for _ in 0...(generator.next() % 3) {
                let index = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[index] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: index)
                }
            }
            guard let fast = frequent.parse(bytes) else { continue }
            recognized += 1
            #expect(fast == (try? ServerMessage.parse(bytes)), "\(String(decoding: bytes, as: UTF8.self))")
        }
        // Mutations that keep a message valid (a digit for a digit) are taken, so the comparison ran.
        #expect(recognized > 100)
    }
}
