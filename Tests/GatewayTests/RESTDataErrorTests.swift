import DataModel
@testable import Gateway
import HTTP1
import Testing

@Suite("RESTCall.dataError: Firebase's texts for bodies that are not valid data")
struct RESTDataErrorTests {
    /// The REST error for `body` read as PUT/POST data (`update == false`) or as a PATCH object.
    private static func error(_ body: String, update: Bool = false) throws -> RESTError {
        let bytes = Array(body.utf8)
        do {
            if update { _ = try JSONReader.readUpdate(bytes) } else { _ = try JSONReader.readData(bytes) }
        } catch {
            return RESTCall.dataError(error, body: bytes, object: update)
        }
        throw NotRejected()
    }

    private struct NotRejected: Error {}

    private static func keyMessage(_ line: Int, _ column: Int) -> String {
        "Invalid data; couldn't parse key beginning at \(line):\(column). Key value can't be empty or contain $ # [ ] / or ."
    }

    @Test(
        "an invalid key is located by the 1-based line and column where the key begins",
        arguments: [
            (#"{"a.b":1}"#, 1, 2),
            (#"{"ok":1,"":2}"#, 1, 9),
            ("{\n  \"ok\": 1,\n  \"bad.key\": 2\n}", 3, 3),
            ("{\"a\": {\n    \"b\": {\n        \"c$\": true\n    }\n}}", 3, 9),
            ("{\r\n  \"ok\": 1,\r\n  \"bad.key\": 2\r\n}", 3, 3),
            ("[\n  {\"fine\": 1},\n  {\"x\": {\"y[0]\": 1}}\n]", 3, 10),
            ("\n\n\n{\"#\":1}", 4, 2),
            ("{\"a\":1,\n\"b\":2,\n\"c\":{\"d\":{\"e/f\":3}}}", 3, 11),
        ])
    func invalidKeyPosition(body: String, line: Int, column: Int) throws {
        let error = try Self.error(body)
        #expect(error.status == .badRequest)
        #expect(error.message == Self.keyMessage(line, column))
    }

    @Test(
        "an invalid key nested in a PATCH value is located in the whole body",
        arguments: [
            ("{\n  \"a\": {\n    \"b.c\": 1\n  }\n}", 3, 5),
            ("{\"x/y\": 1, \"z\": {\"$w\": 2}}", 1, 18),
        ])
    func patchNestedKeyPosition(body: String, line: Int, column: Int) throws {
        #expect(try Self.error(body, update: true).message == Self.keyMessage(line, column))
    }

    @Test(
        "an invalid PATCH path is located where its key begins",
        arguments: [
            ("{\n  \"x/y\": 1,\n  \"bad#\": 2\n}", 3, 3),
            (#"{"ok":1,"a.b":2}"#, 1, 9),
        ])
    func patchKeyPosition(body: String, line: Int, column: Int) throws {
        let message = try Self.error(body, update: true).message
        #expect(message == Self.keyMessage(line, column))
    }

    @Test(
        "unparsable bodies get the PUT/POST text or the PATCH text",
        arguments: ["", "{", "nul", "{\"a\":}", "[1,]", "1 2", "{\"a\":1}}", "'x'"])
    func unparsable(body: String) throws {
        #expect(try Self.error(body).message == "Invalid data; couldn't parse JSON object, array, or value.")
        #expect(try Self.error(body, update: true).message
            == "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
    }

    @Test("a PATCH body that is JSON but not an object gets the PATCH text", arguments: ["1", "[1]", "\"s\"", "null"])
    func patchNotObject(body: String) throws {
        #expect(try Self.error(body, update: true).message
            == "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
    }

    @Test(
        "other invalid data is 'Invalid data; ' and the reason",
        arguments: [
            (#"{".priority":true,"a":1}"#, ValueError.invalidPriority),
            (#"{".sv":"nope"}"#, .unknownServerValue),
            (#"{".value":1,"a":2}"#, .metadataWithChildren),
            (#"{"a":1,"a":2}"#, .duplicateKey("a")),
        ])
    func otherInvalidData(body: String, reason: ValueError) throws {
        let error = try Self.error(body)
        #expect(error.status == .badRequest)
        #expect(error.message == "Invalid data; \(reason)")
    }

    @Test("data nested too deep names the depth")
    func tooDeep() throws {
        let body = String(repeating: "{\"a\":", count: 33) + "1" + String(repeating: "}", count: 33)
        let error = try Self.error(body)
        #expect(error.message.hasPrefix("Invalid data; Data nests "))
    }
}
