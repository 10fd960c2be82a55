@testable import CanopyDatabase
import DataModel
import Testing
import Wire

/// Requests encoded where they are made and numbered when sent: byte for byte what the wire encoder writes.
@Suite("PreparedRequest")
struct PreparedRequestTests {
    static func actions() throws -> [ClientAction] {
        let value = try JSONReader.readData(Array(#"{"seq":7,"pad":"x\"y","n":{".sv":"timestamp"}}"#.utf8))
        return [
            .put(PutRequest(target: .node(try Path("/a/b")), value: value)),
            .put(PutRequest(target: .node(.root), value: value, hash: "abc")),
            .merge(MergeRequest(path: try Path("/rooms"), entries: [
                UpdateEntry(target: .node(try Path("r1/title")), value: value),
            ])),
            .get(GetRequest(path: try Path("/g"))),
            .onDisconnectCancel(path: try Path("/presence")),
        ]
    }

    @Test("every action at every number of digits encodes as ClientMessage does")
    func matchesTheEncoder() throws {
        for action in try Self.actions() {
            let prepared = PreparedRequest(action)
            for number in [1, 9, 10, 99, 100, 12_345, 9_876_543_210] {
                let expected = ClientMessage.request(ClientRequest(number: number, action: action)).encoded()
                #expect(prepared.count(number: number) == expected.count)
                #expect(prepared.message(number: number) == expected)
                var written = [UInt8](repeating: 0, count: expected.count)
                written.withUnsafeMutableBytes { prepared.write(number: number, into: $0) }
                #expect(written == expected)
            }
        }
    }
}

extension PreparedRequestTests {
    @Test("a put carrying its JSON text as written is the encoder's message when the text is in export format")
    func putOfJSONText() throws {
        for json in [#"{"pad":"x\"y","seq":7}"#, #""text""#, "12.5", "null", #"{"n":{".sv":"timestamp"}}"#] {
            let path = try Path("/client-bench/writes")
            let value = try JSONReader.readData(Array(json.utf8))
            let encoder = PreparedRequest(.put(PutRequest(target: .node(path), value: value)))
            let carried = PreparedRequest(putAt: path, json: Array(json.utf8))
            #expect(carried.message(number: 42) == encoder.message(number: 42))
        }
    }
}
