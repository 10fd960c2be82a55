import Foundation
import Testing

/// One exchange from `Tests/Fixtures/Wire/*.json`: the spec's §13 examples and the other message shapes, kept as
/// data so that protocol test clients can replay them.
struct Fixture: Sendable, CustomTestStringConvertible {
    /// One frame (or a narrative event) of an exchange.
    struct Step: Sendable {
        /// `client-to-server` or `server-to-client`; `nil` for events.
        var direction: String?
        /// The client connection (`A`, `B`, …).
        var connection: String?
        /// The step's id, unique within its fixture.
        var id: String?
        /// The frame text exactly as the spec shows it.
        var frame: String?
        /// `ClientMessage.encoded()` of the parsed frame, where it differs from ``frame``.
        var reencoded: String?
        /// The exact bytes Canopy sends, where they differ from the spec's text (member order of data).
        var canopy: String?
        /// What happens between frames.
        var event: String?
        /// Why the step is there.
        var comment: String?

        /// Whether the client sends this frame.
        var isClientFrame: Bool { direction == "client-to-server" && frame != nil }
        /// Whether the server sends this frame.
        var isServerFrame: Bool { direction == "server-to-client" && frame != nil }
    }

    /// File name without extension.
    var name: String
    /// Human title.
    var title: String
    /// What the exchange shows.
    var comment: String
    /// The steps in order.
    var steps: [Step]

    var testDescription: String { name }

    /// The step with `id`.
    func step(_ id: String) -> Step? {
        steps.first { $0.id == id }
    }

    /// The fixture directory, found from this source file's location.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Wire")

    /// Every fixture, by file name.
    static let all: [Fixture] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted().compactMap { load($0) }
    }()

    /// The fixture named `name` (without `.json`).
    static func named(_ name: String) -> Fixture? {
        all.first { $0.name == name }
    }

    private static func load(_ file: String) -> Fixture? {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent(file)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let name = object["name"] as? String, let title = object["title"] as? String,
            let comment = object["comment"] as? String, let steps = object["steps"] as? [[String: Any]]
        else { return nil }
        return Fixture(
            name: name, title: title, comment: comment,
            steps: steps.map { step in
                Step(
                    direction: step["direction"] as? String, connection: step["connection"] as? String,
                    id: step["id"] as? String, frame: step["frame"] as? String,
                    reencoded: step["reencoded"] as? String, canopy: step["canopy"] as? String,
                    event: step["event"] as? String, comment: step["comment"] as? String)
            })
    }
}

/// Fixture lookups that fail the test with a clear message instead of crashing.
enum FixtureError: Error, CustomStringConvertible {
    case missing(String)

    var description: String {
        switch self {
        case .missing(let what): return "missing fixture \(what)"
        }
    }
}

/// The frame text of step `id` in fixture `name` (the exact bytes Canopy sends for server frames).
func fixtureFrame(_ name: String, _ id: String) throws -> String {
    guard let step = Fixture.named(name)?.step(id), let frame = step.frame else {
        throw FixtureError.missing("\(name)/\(id)")
    }
    return step.canopy ?? frame
}

/// The bytes of a string.
func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// A byte array as text, for readable expectation failures.
func text(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
}
