import DataModel
@testable import Gateway
import Store
import Testing

@Suite("What a view pushes for a write")
struct ViewStateTests {
    private func loaded(_ data: String, query: QueryParams = .all) throws -> ViewState {
        var state = ViewState()
        state.start(with: try node(data), query: query)
        return state
    }

    @Test("a set below the listen is pushed as data at the written location")
    func setBelow() throws {
        var state = try loaded(#"{"title":"Lobby"}"#)
        let push = state.apply([try change("/rooms/r1/title", #""Lobby""#, #""Main hall""#)], at: try path("/rooms/r1"))
        #expect(message(push) == #"{"t":"d","d":{"a":"d","b":{"p":"/rooms/r1/title","d":"Main hall"}}}"#)
        #expect(json(state.node) == #"{"title":"Main hall"}"#)
    }

    @Test("an update with several locations is pushed as one merge at their common ancestor")
    func updateMerge() throws {
        var state = try loaded(#"{"members":{"bob":true}}"#)
        let push = state.apply([
            try change("/rooms/r1/members/carol", "null", "true"),
            try change("/rooms/r1/members/bob", "true", "null"),
            try change("/rooms/r1/updatedAt", "null", "5"),
        ], at: try path("/rooms/r1"))
        #expect(message(push) == #"{"t":"d","d":{"a":"m","b":{"p":"/rooms/r1","d":{"members/carol":true,"members/bob":null,"updatedAt":5}}}}"#)
        #expect(json(state.node) == #"{"members":{"carol":true},"updatedAt":5}"#)
    }

    @Test("a write above the listen is re-rooted at the listen without its siblings")
    func writeAbove() throws {
        var state = try loaded(#"{"x":1}"#)
        let push = state.apply([try change("/a", #"{"b":{"x":1},"secret":2}"#, #"{"b":{"x":2},"secret":3}"#)], at: try path("/a/b"))
        #expect(message(push) == #"{"t":"d","d":{"a":"d","b":{"p":"/a/b","d":{"x":2}}}}"#)
    }

    @Test("writes to unrelated locations and writes that change nothing push nothing")
    func unrelated() throws {
        var state = try loaded(#"{"x":1}"#)
        #expect(state.apply([try change("/other", "1", "2")], at: try path("/a")) == nil)
        #expect(state.apply([try change("/a/x", "1", "1")], at: try path("/a")) == nil)
    }

    @Test("a limitToLast window moves: the child pushed out is removed and the new one added")
    func windowMoves() throws {
        let query = try QueryParams(wireObject: .object([("l", .number(2)), ("vf", .string("r"))]))
        var state = try loaded(#"{"m1":{"text":"a"},"m2":{"text":"b"},"m3":{"text":"c"}}"#, query: query)
        #expect(json(state.result) == #"{"m2":{"text":"b"},"m3":{"text":"c"}}"#)
        let added = state.apply([try change("/messages/m4", "null", #"{"text":"d"}"#)], at: try path("/messages"))
        #expect(message(added, tag: 1) == #"{"t":"d","d":{"a":"m","b":{"p":"/messages","d":{"m2":null,"m4":{"text":"d"}},"t":1}}}"#)
        let removed = state.apply([try change("/messages/m4", #"{"text":"d"}"#, "null")], at: try path("/messages"))
        #expect(message(removed, tag: 1) == #"{"t":"d","d":{"a":"m","b":{"p":"/messages","d":{"m4":null,"m2":{"text":"b"}},"t":1}}}"#)
        #expect(state.apply([try change("/messages/m1", #"{"text":"a"}"#, #"{"text":"z"}"#)], at: try path("/messages")) == nil)
    }

    @Test("replacing a query's location diffs every child")
    func locationReplaced() throws {
        let query = try QueryParams(wireObject: .object([("l", .number(1)), ("vf", .string("l"))]))
        var state = try loaded(#"{"a":1,"b":2}"#, query: query)
        let push = state.apply([try change("/list", #"{"a":1,"b":2}"#, #"{"c":3}"#)], at: try path("/list"))
        #expect(message(push, tag: 7) == #"{"t":"d","d":{"a":"m","b":{"p":"/list","d":{"a":null,"c":3},"t":7}}}"#)
    }
}

@Suite("View state: updates")
struct ViewStateUpdateTests {
    @Test("an update at or below the view is a merge at the update's path, also when it changed one location")
    func updateIsAMerge() throws {
        var state = ViewState()
        state.start(with: try node(#"{"a":1,"x":{"y":0}}"#), query: .all)
        let single = state.apply([try change("/doc/b", "null", "2")], updateBase: try path("/doc"), at: try path("/doc"))
        #expect(message(single) == #"{"t":"d","d":{"a":"m","b":{"p":"/doc","d":{"b":2}}}}"#)
        let below = state.apply([try change("/doc/x/y", "0", "1")], updateBase: try path("/doc/x"), at: try path("/doc"))
        #expect(message(below) == #"{"t":"d","d":{"a":"m","b":{"p":"/doc/x","d":{"y":1}}}}"#)
    }

    @Test("an update above the view is a set of the locations it changed there")
    func updateAboveIsASet() throws {
        var state = ViewState()
        state.start(with: try node(#"{"a":1}"#), query: .all)
        let push = state.apply([try change("/doc/a", "1", "6")], updateBase: .root, at: try path("/doc"))
        #expect(message(push) == #"{"t":"d","d":{"a":"d","b":{"p":"/doc/a","d":6}}}"#)
    }
}
