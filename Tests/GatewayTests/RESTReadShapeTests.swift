import DataModel
@testable import Gateway
import HTTP1
import Testing

@Suite("RESTReadShape: REST query parameters to a read shape")
struct RESTReadShapeTests {
    /// The query a wire query object (as a listen would send it) describes.
    private static func wire(_ json: String) throws -> QueryParams {
        try QueryParams(wireObject: JSONReader.readValue(Array(json.utf8)))
    }

    private static func shape(_ query: String) throws(RESTError) -> RESTReadShape {
        try RESTReadShape(QueryString(query))
    }

    @Test(
        "parameters that select the whole location or its keys",
        arguments: [
            ("", RESTReadShape.full),
            ("print=pretty&format=export&timeout=3s&ac=1&callback=f", .full),
            ("shallow=false", .full),
            ("shallow=1", .full),
            ("shallow=true", .shallow(limit: nil, anchor: .first)),
            ("shallow=true&print=pretty", .shallow(limit: nil, anchor: .first)),
            ("shallow=true&limitToFirst=2", .shallow(limit: 2, anchor: .first)),
            ("shallow=true&limitToLast=3", .shallow(limit: 3, anchor: .last)),
        ])
    func wholeAndShallow(query: String, expected: RESTReadShape) throws {
        #expect(try Self.shape(query) == expected)
    }

    @Test(
        "every valid query form maps to the query a listen with the same wire object gets",
        arguments: [
            // orderBy alone: the four kinds of index.
            (#"orderBy="$key""#, #"{"i":".key"}"#),
            (#"orderBy="$value""#, #"{"i":".value"}"#),
            (#"orderBy="$priority""#, #"{"i":".priority"}"#),
            (#"orderBy="height""#, #"{"i":"height"}"#),
            (#"orderBy="dimensions/height""#, #"{"i":"dimensions/height"}"#),
            (#"orderBy="/a//b/""#, #"{"i":"a/b"}"#),
            // Percent-encoded as clients send them.
            ("orderBy=%22%24key%22&startAt=%22a%22", #"{"i":".key","sp":"a"}"#),
            ("orderBy=%22height%22&startAt=3%2C%22k%22", #"{"i":"height","sp":3,"sn":"k"}"#),
            // Inclusive bounds: numbers, strings, booleans, null, and a key name after a comma.
            (#"orderBy="height"&startAt=3"#, #"{"i":"height","sp":3}"#),
            (#"orderBy="height"&startAt=-2.5e1"#, #"{"i":"height","sp":-25}"#),
            (#"orderBy="height"&endAt=3.5"#, #"{"i":"height","ep":3.5}"#),
            (#"orderBy="height"&startAt=1&endAt=9"#, #"{"i":"height","sp":1,"ep":9}"#),
            (#"orderBy="name"&startAt="b"&endAt="m""#, #"{"i":"name","sp":"b","ep":"m"}"#),
            (#"orderBy="flag"&startAt=true"#, #"{"i":"flag","sp":true}"#),
            (#"orderBy="flag"&endAt=false"#, #"{"i":"flag","ep":false}"#),
            (#"orderBy="x"&startAt=null"#, #"{"i":"x","sp":null}"#),
            (#"orderBy="x"&startAt=3,"k""#, #"{"i":"x","sp":3,"sn":"k"}"#),
            (#"orderBy="x"&endAt=3,"k""#, #"{"i":"x","ep":3,"en":"k"}"#),
            (#"orderBy="x"&startAt=null,"k""#, #"{"i":"x","sp":null,"sn":"k"}"#),
            (#"orderBy="x"&startAt=true,"k""#, #"{"i":"x","sp":true,"sn":"k"}"#),
            (#"orderBy="x"&startAt="a,b","k""#, #"{"i":"x","sp":"a,b","sn":"k"}"#),
            (#"orderBy="x"&startAt="a\",b""#, #"{"i":"x","sp":"a\",b"}"#),
            (#"orderBy="x"&startAt= "a",  "k""#, #"{"i":"x","sp":"a","sn":"k"}"#),
            (#"orderBy="$value"&startAt="a"&endAt="a\uf8ff""#, #"{"i":".value","sp":"a","ep":"a\uf8ff"}"#),
            (#"orderBy="$priority"&startAt=1&endAt="z""#, #"{"i":".priority","sp":1,"ep":"z"}"#),
            (#"orderBy="$key"&startAt="a"&endAt="m""#, #"{"i":".key","sp":"a","ep":"m"}"#),
            // equalTo is both bounds.
            (#"orderBy="name"&equalTo="bob""#, #"{"i":"name","sp":"bob","ep":"bob"}"#),
            (#"orderBy="n"&equalTo=5"#, #"{"i":"n","sp":5,"ep":5}"#),
            (#"orderBy="n"&equalTo=true"#, #"{"i":"n","sp":true,"ep":true}"#),
            (#"orderBy="n"&equalTo=null"#, #"{"i":"n","sp":null,"ep":null}"#),
            (#"orderBy="n"&equalTo=5,"k""#, #"{"i":"n","sp":5,"sn":"k","ep":5,"en":"k"}"#),
            (#"orderBy="$key"&equalTo="k""#, #"{"i":".key","sp":"k","ep":"k"}"#),
            // Exclusive bounds: without a name they skip every child at the value.
            (#"orderBy="$value"&startAfter=5"#, #"{"i":".value","sp":5,"sn":"[MAX_NAME]","sin":false}"#),
            (#"orderBy="$value"&endBefore=5"#, #"{"i":".value","ep":5,"en":"[MIN_NAME]","ein":false}"#),
            (#"orderBy="$value"&startAfter=5,"k""#, #"{"i":".value","sp":5,"sn":"k","sin":false}"#),
            (#"orderBy="$value"&endBefore=5,"k""#, #"{"i":".value","ep":5,"en":"k","ein":false}"#),
            (#"orderBy="$key"&startAfter="b""#, #"{"i":".key","sp":"b","sin":false}"#),
            (#"orderBy="$key"&endBefore="m""#, #"{"i":".key","ep":"m","ein":false}"#),
            (#"orderBy="x"&startAfter=1&endBefore=9"#,
             #"{"i":"x","sp":1,"sn":"[MAX_NAME]","sin":false,"ep":9,"en":"[MIN_NAME]","ein":false}"#),
            (#"orderBy="x"&startAt=1&endBefore=9"#, #"{"i":"x","sp":1,"ep":9,"en":"[MIN_NAME]","ein":false}"#),
            // Limits.
            (#"orderBy="$key"&limitToFirst=2"#, #"{"i":".key","l":2,"vf":"l"}"#),
            (#"orderBy="$key"&limitToLast=3"#, #"{"i":".key","l":3,"vf":"r"}"#),
            (#"orderBy="h"&startAt=1&limitToFirst=1"#, #"{"i":"h","sp":1,"l":1,"vf":"l"}"#),
            (#"orderBy="h"&endAt=1&limitToLast=100000"#, #"{"i":"h","ep":1,"l":100000,"vf":"r"}"#),
        ])
    func validQueries(query: String, wireObject: String) throws {
        #expect(try Self.shape(query) == .query(Self.wire(wireObject)))
    }

    @Test("orderBy \"$priority\" alone is the unfiltered query")
    func priorityAlone() throws {
        #expect(try Self.shape(#"orderBy="$priority""#) == .query(.all))
    }

    @Test("startAfter on a key index starts strictly after that key")
    func keyIndexExclusive() throws {
        guard case .query(let query) = try Self.shape(#"orderBy="$key"&startAfter="b""#) else {
            Issue.record("not a query")
            return
        }
        let start = try #require(query.start)
        #expect(start.name == .key(try Key("b")))
        #expect(!start.inclusive)
    }

    @Test(
        "every invalid combination has Firebase's error text",
        arguments: [
            // A filter without orderBy.
            ("startAt=1", "orderBy must be defined when other query parameters are defined"),
            ("endAt=1", "orderBy must be defined when other query parameters are defined"),
            ("equalTo=1", "orderBy must be defined when other query parameters are defined"),
            ("startAfter=1", "orderBy must be defined when other query parameters are defined"),
            ("endBefore=1", "orderBy must be defined when other query parameters are defined"),
            ("limitToFirst=1", "orderBy must be defined when other query parameters are defined"),
            ("limitToLast=1", "orderBy must be defined when other query parameters are defined"),
            ("print=pretty&startAt=", "orderBy must be defined when other query parameters are defined"),
            // orderBy that is not a JSON-encoded path.
            ("orderBy=$key", "orderBy must be a valid JSON encoded path"),
            ("orderBy=height", "orderBy must be a valid JSON encoded path"),
            ("orderBy=", "orderBy must be a valid JSON encoded path"),
            (#"orderBy="""#, "orderBy must be a valid JSON encoded path"),
            (#"orderBy="/""#, "orderBy must be a valid JSON encoded path"),
            (#"orderBy="$foo""#, "orderBy must be a valid JSON encoded path"),
            (#"orderBy="a.b""#, "orderBy must be a valid JSON encoded path"),
            (#"orderBy="a[0]""#, "orderBy must be a valid JSON encoded path"),
            ("orderBy=3", "orderBy must be a valid JSON encoded path"),
            ("orderBy=null", "orderBy must be a valid JSON encoded path"),
            (#"orderBy=["a"]"#, "orderBy must be a valid JSON encoded path"),
            (#"orderBy="unterminated"#, "orderBy must be a valid JSON encoded path"),
            // The key index takes string bounds only.
            (#"orderBy="$key"&startAt=1"#, "Provided key index type is invalid, must be string"),
            (#"orderBy="$key"&endAt=true"#, "Provided key index type is invalid, must be string"),
            (#"orderBy="$key"&equalTo=null"#, "Provided key index type is invalid, must be string"),
            (#"orderBy="$key"&startAfter=2"#, "Provided key index type is invalid, must be string"),
            (#"orderBy="$key"&endBefore=false"#, "Provided key index type is invalid, must be string"),
            // shallow with query parameters.
            (#"shallow=true&orderBy="$key""#, "Mixing 'shallow' and querying parameters is not supported"),
            ("shallow=true&startAt=1", "Mixing 'shallow' and querying parameters is not supported"),
            ("shallow=true&endAt=1", "Mixing 'shallow' and querying parameters is not supported"),
            ("shallow=true&equalTo=1", "Mixing 'shallow' and querying parameters is not supported"),
            ("shallow=true&startAfter=1", "Mixing 'shallow' and querying parameters is not supported"),
            ("shallow=true&endBefore=1", "Mixing 'shallow' and querying parameters is not supported"),
            (#"shallow=true&orderBy="$key"&limitToFirst=1"#, "Mixing 'shallow' and querying parameters is not supported"),
            // Limits.
            (#"orderBy="x"&limitToFirst=1&limitToLast=1"#, "limitToFirst and limitToLast cannot both be set"),
            ("shallow=true&limitToFirst=1&limitToLast=1", "limitToFirst and limitToLast cannot both be set"),
            (#"orderBy="x"&limitToFirst=0"#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToFirst=-1"#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToFirst=1.5"#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToFirst=1e2"#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToFirst=two"#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToFirst="#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToFirst=99999999999999999999"#, "Query parameter limitToFirst must be a positive integer"),
            (#"orderBy="x"&limitToLast=0"#, "Query parameter limitToLast must be a positive integer"),
            (#"orderBy="x"&limitToLast=%2D3"#, "Query parameter limitToLast must be a positive integer"),
            ("shallow=true&limitToFirst=0", "Query parameter limitToFirst must be a positive integer"),
            ("shallow=true&limitToLast=x", "Query parameter limitToLast must be a positive integer"),
            // equalTo is both bounds already.
            (#"orderBy="x"&equalTo=1&startAt=1"#, "equalTo cannot be combined with startAt or endAt"),
            (#"orderBy="x"&equalTo=1&endAt=1"#, "equalTo cannot be combined with startAt or endAt"),
            (#"orderBy="x"&equalTo=1&startAfter=1"#, "equalTo cannot be combined with startAt or endAt"),
            (#"orderBy="x"&equalTo=1&endBefore=1"#, "equalTo cannot be combined with startAt or endAt"),
            // Bounds that are not JSON primitives.
            (#"orderBy="x"&startAt={"a":1}"#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="x"&endAt=[1]"#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="x"&equalTo={}"#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="$key"&startAt={}"#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="x"&startAt=abc"#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="x"&startAt="#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="x"&startAt="open"#, "Constraint index field must be a JSON primitive"),
            (#"orderBy="x"&startAt=01"#, "Constraint index field must be a JSON primitive"),
            // The key name after the comma must be a JSON string.
            (#"orderBy="x"&startAt=1,k"#, "Constraint key field must be a valid key name"),
            (#"orderBy="x"&startAt=1,"#, "Constraint key field must be a valid key name"),
            (#"orderBy="x"&endAt="a",2"#, "Constraint key field must be a valid key name"),
            // One lower and one upper bound.
            (#"orderBy="x"&startAt=1&startAfter=1"#,
             "Only one of startAt and startAfter, and one of endAt and endBefore, may be given"),
            (#"orderBy="x"&endAt=1&endBefore=1"#,
             "Only one of startAt and startAfter, and one of endAt and endBefore, may be given"),
        ])
    func invalidQueries(query: String, message: String) throws {
        let error = try #require(restError { () throws(RESTError) in try Self.shape(query) })
        #expect(error.status == .badRequest)
        #expect(error.message == message)
    }

    @Test("a limit larger than any location selects everything")
    func hugeLimit() throws {
        let shape = try Self.shape(#"orderBy="x"&limitToFirst=10000000000000000"#)
        guard case .query(let query) = shape else {
            Issue.record("expected a query, got \(shape)")
            return
        }
        #expect(query.limit == Int(Int32.max))
    }
}
