import CanopyDatabase
import Foundation
import Testing

/// The observer's events for the operations of `Fixtures/event-sequences.json`, checked against the sequences the
/// Firebase JS SDK raises for them (recorded in the fixture from the protocol spec and the SDK's event generator).
@Suite("Event sequences as the JS SDK raises them", .serialized)
struct EventSequenceTests {
    struct Scenario: Decodable, Sendable {
        let name: String
        let initial: JSONAny
        let path: String
        let query: [[JSONAny]]
        let operations: [[String: JSONAny]]
        let expected: [String]
    }

    struct Fixture: Decodable, Sendable {
        let scenarios: [Scenario]
    }

    /// Any JSON value, decoded to what the API takes.
    struct JSONAny: Decodable, @unchecked Sendable {  // immutable
        let value: Any?
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { value = nil }
            else if let bool = try? container.decode(Bool.self) { value = bool }
            else if let number = try? container.decode(Double.self) { value = number }
            else if let string = try? container.decode(String.self) { value = string }
            else if let array = try? container.decode([JSONAny].self) { value = array.map { $0.value ?? NSNull() } }
            else { value = try container.decode([String: JSONAny].self).mapValues { $0.value ?? NSNull() } }
        }
    }

    static let fixture: Fixture = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/event-sequences.json")
        // A missing or broken fixture fails every scenario below with an empty list.
        return (try? JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))) ?? Fixture(scenarios: [])
    }()

    static func query(_ reference: DatabaseReference, _ constraints: [[JSONAny]]) -> DatabaseQuery {
        var query: DatabaseQuery = reference
        for constraint in constraints {
            let name = constraint.first?.value as? String ?? ""
            let argument = constraint.count > 1 ? constraint[1].value : nil
            switch name {
            case "orderByChild": query = query.queryOrdered(byChild: argument as? String ?? "")
            case "orderByKey": query = query.queryOrderedByKey()
            case "orderByValue": query = query.queryOrderedByValue()
            case "startAt": query = query.queryStarting(atValue: argument)
            case "endAt": query = query.queryEnding(atValue: argument)
            case "limitToFirst": query = query.queryLimited(toFirst: UInt((argument as? Double) ?? 0))
            case "limitToLast": query = query.queryLimited(toLast: UInt((argument as? Double) ?? 0))
            default: Issue.record("unknown constraint \(name)")
            }
        }
        return query
    }

    @Test("the fixture has scenarios")
    func fixtureLoads() {
        #expect(Self.fixture.scenarios.count >= 5)
    }

    @Test("each scenario raises the JS SDK's events", arguments: Array(Self.fixture.scenarios.indices))
    func scenario(_ index: Int) async throws {
        let scenario = Self.fixture.scenarios[index]
        let server = try ServerUnderTest()
        let configuration = DatabaseConfiguration(host: "127.0.0.1", port: Int(server.port), namespace: "sequence-\(index)")
        let writer = Database(configuration: configuration)
        let observer = Database(configuration: configuration)
        try await writer.reference().setValue(scenario.initial.value)
        let log = DatabaseAPITests.Log()
        let query = Self.query(observer.reference(withPath: scenario.path), scenario.query)
        let kinds: [(DataEventType, String)] = [
            (.childAdded, "child_added"), (.childRemoved, "child_removed"), (.childChanged, "child_changed"),
            (.childMoved, "child_moved"), (.value, "value"),
        ]
        for (kind, name) in kinds {
            query.observe(kind, andPreviousSiblingKeyWith: { snapshot, previous in
                log.add(kind == .value ? "value \(snapshot.childrenCount)" : "\(name) \(snapshot.key) \(previous ?? "-")")
            })
        }
        // The initial events come before any operation.
        let initialCount = scenario.expected.firstIndex { $0.hasPrefix("value") }.map { $0 + 1 } ?? 0
        #expect(await DatabaseAPITests.eventually { log.all.count >= initialCount }, "\(scenario.name)")
        for operation in scenario.operations {
            if let path = operation["set"]?.value as? String {
                try await writer.reference(withPath: path).setValue(operation["value"]?.value)
            } else if let path = operation["update"]?.value as? String {
                let values = operation["value"]?.value as? [String: Any] ?? [:]
                try await writer.reference(withPath: path).updateChildValues(values)
            }
        }
        #expect(await DatabaseAPITests.eventually { log.all.count >= scenario.expected.count }, "\(scenario.name)")
        #expect(log.all == scenario.expected, "\(scenario.name)")
    }
}
