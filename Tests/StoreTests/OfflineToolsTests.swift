import DataModel
import Store
import TestSupport
import Testing

@Suite("Export and import")
struct OfflineToolsTests {
    static let fixtures: String = {
        var path = #filePath
        while let slash = path.lastIndex(of: "/"), !path.hasSuffix("/Tests") { path = String(path[..<slash]) }
        return path + "/Fixtures/Store"
    }()

    static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    @Test("an imported export file exports back in canonical export format, priorities kept")
    func roundTrip() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let namespace = directory.path + "/default"
        try OfflineTools.importJSON(file: Self.fixtures + "/export-sample.json", directory: namespace, path: .root)
        let exported = try OfflineTools.exportJSON(directory: namespace, path: .root)
        let expected = try readTextFile(Self.fixtures + "/export-sample.expected.json")
        #expect(Self.text(exported) == expected)
        let users = try OfflineTools.exportJSON(directory: namespace, path: try Fixture.path("/users/alice"))
        #expect(Self.text(users) == #"{"age":30,"name":"Alice",".priority":1}"#)
    }

    @Test("an import at a path replaces only that location, and a server store opens the result")
    func importAtPath() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let namespace = directory.path + "/ns1"
        var persistence = PersistenceConfiguration(directory: namespace)
        persistence.snapshotIntervalSeconds = nil
        let configuration = StoreConfiguration(persistence: persistence)
        let store = try Store(configuration: configuration)
        await store.applyOrFail(try Fixture.set("/keep", #""me""#))
        await store.applyOrFail(try Fixture.set("/target/old", "1"))
        try store.close()
        try OfflineTools.importJSON(file: Self.fixtures + "/export-sample.json", directory: namespace,
                                    path: try Fixture.path("/target"))
        let reopened = try Store(configuration: configuration)
        defer { try? reopened.close() }
        let sample = try Fixture.node(try readTextFile(Self.fixtures + "/export-sample.expected.json"))
        #expect(await reopened.value(at: try Fixture.path("/target")) == sample)
        #expect(await reopened.value(at: try Fixture.path("/keep")) == Node(.string("me")))
    }

    @Test("exporting a namespace that does not exist gives null, and a namespace in use cannot be exported")
    func missingAndLocked() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        #expect(Self.text(try OfflineTools.exportJSON(directory: directory.path + "/none", path: .root)) == "null")
        let namespace = directory.path + "/busy"
        let store = try Store(configuration: StoreConfiguration(
            persistence: PersistenceConfiguration(directory: namespace)))
        #expect(throws: JournalError.locked(directory: namespace)) {
            try OfflineTools.exportJSON(directory: namespace, path: .root)
        }
        try store.close()
    }

    @Test("invalid JSON is rejected with the parser's error and changes nothing")
    func invalidInput() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/bad.json"
        try writeTextFile(file, #"{"a": [1, 2"#)
        #expect(throws: OfflineTools.ImportError.self) {
            try OfflineTools.importJSON(file: file, directory: directory.path + "/ns", path: .root)
        }
    }
}
