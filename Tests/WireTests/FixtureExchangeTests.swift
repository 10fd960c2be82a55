import DataModel
import Foundation
import Testing
import Wire

@Suite("Spec exchanges (Tests/Fixtures/Wire)")
struct FixtureExchangeTests {
    @Test("the fixtures are all there, each with a name, a title, a comment and unique step ids")
    func fixturesAreComplete() throws {
        #expect(Fixture.all.count == 14)
        for index in 1...12 {
            #expect(Fixture.all.contains { $0.name.hasPrefix(String(format: "example-%02d-", index)) })
        }
        for fixture in Fixture.all {
            #expect(!fixture.title.isEmpty && !fixture.comment.isEmpty)
            let ids = fixture.steps.compactMap(\.id)
            #expect(Set(ids).count == ids.count, "\(fixture.name) repeats a step id")
            #expect(fixture.steps.allSatisfy { ($0.frame == nil) != ($0.event == nil) })
        }
    }

    @Test("client frames reassemble, parse, and re-encode to the frame (or its recorded re-encoding)",
        arguments: Fixture.all)
    func clientFramesRoundTrip(_ fixture: Fixture) throws {
        var assemblers: [String: FrameAssembler] = [:]
        for step in fixture.steps where step.isClientFrame {
            let connection = step.connection ?? ""
            var assembler = assemblers[connection] ?? FrameAssembler()
            let output = try assembler.receive(bytes(step.frame ?? ""))
            assemblers[connection] = assembler
            guard case .message(let message) = output else { continue }
            let parsed = try ClientMessage.parse(message)
            let encoded = parsed.encoded()
            let expected = step.reencoded ?? text(message)
            #expect(text(encoded) == expected, "\(fixture.name)/\(step.id ?? "?")")
            #expect(try ClientMessage.parse(encoded) == parsed, "\(fixture.name)/\(step.id ?? "?")")
        }
        #expect(assemblers.values.allSatisfy { !$0.isAssembling })
    }

    @Test("server frames parse and re-encode to exactly the bytes Canopy sends", arguments: Fixture.all)
    func serverFramesRoundTrip(_ fixture: Fixture) throws {
        for step in fixture.steps where step.isServerFrame {
            let frame = try #require(step.frame)
            let expected = step.canopy ?? frame
            _ = try ServerMessage.parse(bytes(frame))
            let parsed = try ServerMessage.parse(bytes(expected))
            #expect(text(parsed.encoded()) == expected, "\(fixture.name)/\(step.id ?? "?")")
            if step.canopy != nil {
                #expect(try sameJSON(frame, expected), "\(fixture.name)/\(step.id ?? "?") differs beyond member order")
            }
        }
    }

    /// Whether two JSON texts are equal when object members are compared as sets.
    private func sameJSON(_ first: String, _ second: String) throws -> Bool {
        let a = try JSONSerialization.jsonObject(with: Data(first.utf8), options: [.fragmentsAllowed])
        let b = try JSONSerialization.jsonObject(with: Data(second.utf8), options: [.fragmentsAllowed])
        return (a as? NSObject)?.isEqual(b) ?? false
    }
}
