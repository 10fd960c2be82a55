import DataModel
import Testing

@testable import Rules

/// Expression semantics from the live-parity facts recorded in security-rules.md §5 (targaryen's fixtures, each
/// deployed to a real Firebase database: valid or not, failing at run time or not, and the result).
@Suite("Expression semantics (security-rules.md §5)")
struct ExpressionSemanticsTests {
    /// The legacy-token user of the live fixtures: claims directly in `auth`.
    static let bob = #"{"foo":{"bar":true},"provider":"custom","someBool":true,"someInt":1,"someString":"one","uid":"custom:bob"}"#
    static let uidWithEmail = #"{"uid":"bob@example.com"}"#

    struct Case: CustomTestStringConvertible, Sendable {
        var rule: String
        var auth: String?
        var data: String?
        var wildcards: [(name: String, key: String)]
        var expected: ExpressionOutcome

        init(_ rule: String, _ expected: ExpressionOutcome, auth: String? = nil, data: String? = nil, wildcards: [(name: String, key: String)] = []) {
            self.rule = rule
            self.auth = auth
            self.data = data
            self.wildcards = wildcards
            self.expected = expected
        }

        var testDescription: String { "\(rule) → \(expected)" }
    }

    static let liveFacts: [Case] = [
        Case("1 < 2", .true),
        Case("true", .true),
        Case("'foo'.contains('o')", .true),
        Case("auth !== null", .false),
        Case("auth.uid !== 'eviluser'", .true),
        Case("auth.someInt < 5", .true, auth: bob),
        Case("auth.provider === 'custom'", .true, auth: bob),
        Case("auth.contains('75')", .error),
        Case("auth.notfound.contains('75')", .error, auth: bob),
        Case("auth.not.found.length > 0", .error, auth: bob),
        Case("auth.isTernary === true ? root.child('x').exists() : true", .true, auth: bob),
        Case("root.isBoolean()", .false),
        Case("root.child(auth.someString.toUpperCase()).val() === null", .error),
        Case("root.hasChildren()", .false),
        Case("root.hasChildren(['foo', 'bar', 'baz'])", .false),
        Case("root.hasChildren([auth.uid])", .error),
        Case("root.child('foo').val().matches(/bar/)", .true, data: #"{"foo":"bar"}"#),
        Case("root.child('foo').val().matches(/BAR/i)", .true, data: #"{"foo":"bar"}"#),
        Case("root.child('foo').val().matches(/bar/ig)", .invalid),
        Case("root.child('users/' + auth.uid).exists()", .error),
        Case("root.child(auth.x + auth.y).exists()", .error),
        Case("var foo = 8", .invalid),
        Case("root = 5", .invalid),
        Case("auth.uid === '5'; auth.id === 5", .invalid),
        Case("7", .invalid),
        Case("'foo'", .invalid),
        Case("auth.someString === 'one' ? 7 : true", .invalid, auth: bob),
        Case("auth.foo.contains(7)", .invalid),
        Case("skies === 'blue'", .invalid),
        Case("root.hasChildren('foo', 'bar')", .invalid),
        Case("root.hasChildren(['foo', 7])", .invalid),
        Case("root.child('str').val().matches('/foo/')", .invalid),
        Case("auth.foo.notFound() == false", .invalid),
        Case("root.val().notFound == false", .invalid),
        Case("root.child('foo') != null", .invalid),
        Case("root.val() > true", .invalid),
        Case("root.val() < true", .invalid),
        Case("root.val() >= true", .invalid),
        Case("root.val() <= true", .invalid),
        Case("$color == 'blue'", .true, wildcards: [("$color", "blue")]),
        Case("$color == 'green'", .false, wildcards: [("$color", "orange")]),
        Case("$color == 'red'", .invalid),
        Case("$color == 'blue' && auth.foo.bar == true", .true, auth: bob, wildcards: [("$color", "blue")]),
        Case("auth.dreams.length > 1", .error),
        Case("auth.dreams.length > 1 ? false : true", .error),
        Case("!(auth.dreams.length > 1)", .error),
        Case("root.val() == 'bar'", .true, data: #""bar""#),
        Case("root.val().contains('ba')", .true, data: #""bar""#),
        Case("root.val().matches(/^ba/)", .true, data: #""bar""#),
        Case("root.val().matches(/^wa/)", .false, data: #""bar""#),
        Case("auth.foo[$bar] == true", .true, auth: bob, wildcards: [("$bar", "bar")]),
        Case("auth.foo['bar'] == true", .true, auth: bob),
        Case("auth.foo.bar == true", .true, auth: bob),
        Case("auth.foo.baz == null", .true),
        Case("root.child('foo').child(auth.foo).val() != null", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').child(auth.foo).val() == null", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').child(auth.foo).exists()", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').child(auth.foo).exists() == false", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').hasChild(auth.foo)", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').hasChild(auth.foo) == false", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').hasChildren([auth.foo])", .error, data: #"{"foo":{"bar":true}}"#),
        Case("root.child('foo').hasChildren([auth.foo]) == false", .error, data: #"{"foo":{"bar":true}}"#),
        Case("'foo'.contains(auth.foo)", .error),
        Case("'foo1'.contains(auth.someInt)", .error, auth: bob),
        Case("'foo'.beginsWith(auth.foo)", .error),
        Case("'1foo'.beginsWith(auth.someInt)", .error, auth: bob),
        Case("'foo'.endsWith(auth.foo)", .error),
        Case("'foo1'.endsWith(auth.someInt)", .error, auth: bob),
        Case("'foo'.replace(auth.foo, 'bar') == 'foo'", .error),
        Case("'foo1'.replace(auth.someInt, 'bar') == 'foobar'", .error, auth: bob),
        Case("'foobar'.replace('bar', auth.someInt) == 'foo1'", .error, auth: bob),
        Case("-auth.foo == -1", .error),
        Case("-auth.someString == -1", .error, auth: bob),
        Case("!(auth.foo == null)", .false),
        Case("!(auth.someString == null)", .true, auth: bob),
        Case("(2**2) == 4", .invalid, auth: bob),
        Case("(auth.someInt + 1) == 2", .true, auth: bob),
        Case("(1 + auth.someInt) == 2", .true, auth: bob),
        Case("(auth.someInt - 1) == 0", .true, auth: bob),
        Case("(1 - auth.someInt) == 0", .true, auth: bob),
        Case("(auth.someInt * 1) == 1", .true, auth: bob),
        Case("(1 * auth.someInt) == 1", .true, auth: bob),
        Case("(auth.someInt / 2) == 0.5", .true, auth: bob),
        Case("(1 / auth.someInt) == 1", .true, auth: bob),
        Case("(auth.someInt % 2) == 1", .true, auth: bob),
        Case("(1 % auth.someInt) == 1", .false, auth: bob),
        Case("(auth.someString + 'two') == 'onetwo'", .true, auth: bob),
        Case("(auth.someString + 1) == 2", .false, auth: bob),
        Case("('two' + auth.someString) == 'twoone'", .true, auth: bob),
        Case("(1 + auth.someString) == 2", .false, auth: bob),
        Case("(1 + 1) == 2", .true, auth: bob),
        Case("(auth.someString - 1) == 0", .error, auth: bob),
        Case("(1 - auth.someString) == 0", .error, auth: bob),
        Case("(auth.someString * 1) == 1", .error, auth: bob),
        Case("(1 * auth.someString) == 1", .error, auth: bob),
        Case("(auth.someString / 2) == 0.5", .error, auth: bob),
        Case("(1 / auth.someString) == 1", .error, auth: bob),
        Case("(auth.someString % 2) == 1", .error, auth: bob),
        Case("(1 % auth.someString) == 1", .error, auth: bob),
        Case("(1 + auth.someBool) == 2", .error, auth: bob),
        Case("(auth.someBool - 1) == 0", .error, auth: bob),
        Case("(1 * auth.someBool) == 1", .error, auth: bob),
        Case("(1 + auth.none) == 2", .error, auth: bob),
        Case("(auth.none - 1) == 0", .error, auth: bob),
        Case("(1 / auth.none) == 1", .error, auth: bob),
        Case("(auth.none % 2) == 0", .error, auth: bob),
        Case("(1/0 + '') == 'NaN'", .true),
        Case("(1/0) > 2", .false),
        Case("(1/0) < 2", .false),
        Case("'foo' == auth.foo", .false),
        Case("auth.foo === 'foo'", .false),
        Case("'foo' != auth.foo", .true),
        Case("auth.foo !== 'foo'", .true),
        Case("'one' == auth.someInt", .false, auth: bob),
        Case("auth.someInt === 'one'", .false, auth: bob),
        Case("'one' != auth.someInt", .true, auth: bob),
        Case("auth.someInt !== 'one'", .true, auth: bob),
        Case("'foo' > auth.foo", .error),
        Case("auth.foo >= 'foo'", .error),
        Case("'foo' < auth.foo", .error),
        Case("auth.foo <= 'foo'", .error),
        Case("'one' > auth.someInt", .error, auth: bob),
        Case("auth.someInt >= 'one'", .error, auth: bob),
        Case("'one' < auth.someInt", .error, auth: bob),
        Case("auth.someInt <= 'one'", .error, auth: bob),
        Case("1 >= auth.someInt", .true, auth: bob),
        Case("2 > auth.someInt", .true, auth: bob),
        Case("1 <= auth.someInt", .true, auth: bob),
        Case("0 < auth.someInt", .true, auth: bob),
        Case("root.parent().exists()", .error),
        Case("root[\"exists\"]() == false", .true),
        Case("root[\"doesNotExist\"]() == true", .invalid),
        Case("root[\"exi\" + \"sts\"]() == false", .invalid),
        Case("root[$foo]() == false", .invalid, wildcards: [("$foo", "exists")]),
        Case("auth.someString[\"contains\"](\"on\") == true", .true, auth: bob),
        Case("auth.someString[\"doesNotContains\"](\"on\") == false", .invalid, auth: bob),
        Case("root.child(\"foo\").val().length < 100", .true, data: #"{"foo":"x"}"#),
        Case("root.child(\"banned/\" + auth.uid).val() != true", .true, auth: uidWithEmail),
        Case("root.hasChild(\"banned/\" + auth.uid) == false", .true, auth: uidWithEmail),
        Case("root.hasChildren([\"banned/\" + auth.uid]) == false", .true, auth: uidWithEmail),
        Case("root.child(\"banned/bob@example.com\").val() != true", .true),
        Case("query.orderByChild == null", .true),
        Case("query.orderByKey == true && query.orderByValue == false && query.orderByPriority == false", .true),
        Case("query.orderByKey != null && query.orderByValue != null && query.orderByPriority != null", .true),
        Case("query.startAt == null && query.endAt == null && query.equalTo == null", .true),
        Case("query.limitToLast == null && query.limitToFirst == null", .true),
        Case("query.foo == 1", .invalid),
    ]

    @Test("live-parity facts", arguments: liveFacts)
    func liveParity(_ fact: Case) throws {
        #expect(try evaluate(fact.rule, auth: fact.auth, data: fact.data, wildcards: fact.wildcards) == fact.expected)
    }

    static let semanticCases: [Case] = [
        // Precedence and associativity (§5.2).
        Case("1 + 2 * 3 == 7", .true),
        Case("(1 + 2) * 3 == 9", .true),
        Case("10 - 4 - 3 == 3", .true),
        Case("2 * 3 % 4 == 2", .true),
        Case("12 / 2 / 3 == 2", .true),
        Case("true || false && false", .true),
        Case("(true || false) && false", .false),
        Case("false ? false : true ? true : false", .true),
        Case("!true == false", .true),
        Case("-2 * -2 == 4", .true),
        Case("1 < 2 == true", .true),
        Case("'a' + 1 + 2 == 'a12'", .true),
        Case("1 + 2 + 'a' == '3a'", .true),
        Case("7 % -3 == 1 && -7 % 3 == -1", .true),
        Case("1 === 1 && 1 !== 2 && 1 == 1.0", .true),
        // Literals.
        Case(".5 == 0.5 && 5. == 5 && 1e3 == 1000 && 1E-2 == 0.01 && 0x1F == 31", .true),
        Case("'it\\'s' == \"it's\" && '\\u0041' == 'A' && '\\x41' == 'A'", .true),
        Case("'\\uD83D\\uDE00'.length == 2 && 'é'.length == 1", .true),
        Case("null == null && !(null == false)", .true),
        Case("1e400 > 1e300 && -1e400 < 0", .true),
        Case("(1e400 + '') == 'Infinity' && (0.1 + 0.2 + '') == '0.30000000000000004' && (1e21 + '') == '1e+21'", .true),
        // Regular expressions versus division.
        Case("4 / 2 / 1 == 2", .true),
        Case("'a/b'.matches(/a\\/b/)", .true),
        Case("'x/'.matches(/[/]/)", .true),
        // Strings compare by code units.
        Case("'a' < 'b' && 'B' < 'a' && 'ab' > 'a' && '' < 'a'", .true),
        Case("'\\uFFFF' > '\\uD83D\\uDE00'", .true),
        Case("'é' == 'e\\u0301'", .false),
        Case("'abcabc'.replace('b', 'x') == 'axcaxc'", .true),
        Case("'abc'.replace('', '-') == '-a-b-c-'", .true),
        Case("'ABC'.toLowerCase() == 'abc' && 'straße'.toUpperCase() == 'STRASSE'", .true),
        Case("'foo'.beginsWith('') && 'foo'.endsWith('oo') && !'foo'.endsWith('O')", .true),
        // Short-circuits skip errors only before they happen.
        Case("true || auth.x.contains('a')", .true),
        Case("false && auth.x.contains('a')", .false),
        Case("auth.x.contains('a') || true", .error),
        Case("auth.x.contains('a') == false", .error),
        Case("true ? true : auth.x.contains('a')", .true),
        // Snapshots.
        Case("root.child('a/b').val() == 1 && root.child('/a/b/').val() == 1 && root.child('a').child('b').val() == 1", .true, data: #"{"a":{"b":1}}"#),
        Case("root.child('a/b').parent().hasChild('b') && root.child('a/b').parent().parent().hasChildren(['a'])", .true, data: #"{"a":{"b":1}}"#),
        Case("root.child('a').val() != null && root.child('a').isString() == false", .true, data: #"{"a":{"b":1}}"#),
        Case("root.child('a/b/c').exists() == false && root.child('a/b/c').val() == null", .true, data: #"{"a":{"b":1}}"#),
        Case("root.child('p').getPriority() == 5 && root.child('p').val() == 'x'", .true, data: #"{"p":{".value":"x",".priority":5}}"#),
        Case("root.child('q').getPriority() == null", .true, data: #"{"q":1}"#),
        Case("root.child('n').isNumber() && root.child('s').isString() && root.child('t').isBoolean()", .true, data: #"{"n":0,"s":"","t":false}"#),
        Case("root.child('a').val() == root.child('a').val()", .false, data: #"{"a":{"b":1}}"#),
        Case("root.child('a').val() + ''  == 'x'", .error, data: #"{"a":{"b":1}}"#),
        Case("root.child('x.y').exists() || root.child('x.y').parent().hasChild('a')", .true, data: #"{"a":1}"#),
        Case("root.child(data.child('k').val()).exists()", .error, data: #"{"k":5}"#),
        Case("root.child($w).exists()", .true, data: #"{"w":1,"x":{"w":2}}"#, wildcards: [("$a", "x"), ("$w", "w")]),
        Case("data.parent().parent().child('w').val() == 1", .true, data: #"{"w":1,"x":{"w":2}}"#, wildcards: [("$a", "x"), ("$w", "w")]),
        Case("data.val() == 2 && $a + '/' + $w == 'x/w'", .true, data: #"{"w":1,"x":{"w":2}}"#, wildcards: [("$a", "x"), ("$w", "w")]),
        // Paths built from a literal and more operands (compiled as templates) equal the concatenated string.
        Case("root.child('x/' + $w).val() == 2 && root.child($a + '/' + $w).val() == 2", .true, data: #"{"w":1,"x":{"w":2}}"#, wildcards: [("$a", "x"), ("$w", "w")]),
        Case("root.child('p' + $w + 'q').val() == 3 && root.hasChild('/p' + $w + 'q/')", .true, data: #"{"pwq":3}"#, wildcards: [("$w", "w")]),
        Case("root.child('//a//' + 'b/' + '/c').val() == 4", .true, data: #"{"a":{"b":{"c":4}}}"#),
        Case("root.child('a/' + root.child('s').val()).val() == 4", .true, data: #"{"s":"b/c","a":{"b":{"c":4}}}"#),
        Case("root.child('n' + 1 + 2).val() == 5 && root.child('m/' + 5).val() == 6", .true, data: #"{"n12":5,"m":{"5":6}}"#),
        Case("root.hasChildren(['a/' + $w, 'a'])", .true, data: #"{"a":{"w":1}}"#, wildcards: [("$w", "w")]),
        Case("root.child('a/' + true).exists()", .error),
        Case("root.child('a/' + auth.uid).exists()", .error),
        Case("root.child('a/' + root).exists()", .invalid),
        // Wildcard captures are strings.
        Case("$k === 5", .false, wildcards: [("$k", "5")]),
        Case("$k === '5'", .true, wildcards: [("$k", "5")]),
        // Auth containers.
        Case("auth.token.firebase.identities['google.com'][0] == '1234' && auth.token.firebase.identities['google.com'].length == 1",
             .true, auth: #"{"uid":"a","token":{"firebase":{"identities":{"google.com":["1234"]}}}}"#),
        Case("auth.token.list[5] == null && auth.token.list[0.5] == null", .true, auth: #"{"uid":"a","token":{"list":[1]}}"#),
        Case("auth.uid.foo == null", .error, auth: #"{"uid":"a"}"#),
        Case("auth.token == auth.token", .true, auth: #"{"uid":"a","token":{"x":1}}"#),
        Case("auth[true] == null", .invalid),
        // Non-boolean rules and operands.
        Case("auth.admin", .true, auth: #"{"admin":true}"#),
        Case("auth.admin", .error, auth: #"{"admin":"yes"}"#),
        Case("!auth.admin", .error),
        Case("now > 1600000000000 && now < 1800000000000", .true),
    ]

    @Test("operators, literals, strings, snapshots and auth", arguments: semanticCases)
    func semantics(_ fact: Case) throws {
        #expect(try evaluate(fact.rule, auth: fact.auth, data: fact.data, wildcards: fact.wildcards) == fact.expected)
    }

    /// Data for the path cases: packed records (nested too), a large map, integer-like keys.
    static let pathData = #"{"x":{"w":2,"r":{"s":{"t":1}},"big":{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16}},"n":{"1":{"2":true},"10":1,"-5":2}}"#
    static let pathWildcards: [(name: String, key: String)] = [("$a", "x"), ("$w", "w")]

    static let pathCases: [Case] = [
        // Paths that follow the evaluation path, leave it, or stay on it.
        Case("root.child($a).child('w').val() == 2 && root.child($a + '/' + $w).exists()", .true, data: pathData, wildcards: pathWildcards),
        Case("root.child('x').child('r').child('s/t').val() == 1 && root.child('x/r').child('s').child('u').exists() == false", .true, data: pathData, wildcards: pathWildcards),
        Case("root.child('x/w/deeper').exists() == false && root.child('x/q').exists() == false && root.child('x/r').exists()", .true, data: pathData, wildcards: pathWildcards),
        Case("data.exists() && data.child('v').exists() == false && data.parent().child('r/s').hasChild('t')", .true, data: pathData, wildcards: pathWildcards),
        // hasChild and hasChildren through packed records, nested records and a large map.
        Case("root.child('x').hasChild('r/s/t') && !root.child('x').hasChild('r/s/u') && root.hasChild('x/big/k16')", .true, data: pathData, wildcards: pathWildcards),
        Case("root.child('x/big').hasChildren(['k0', 'k9', 'k16']) && !root.child('x/big').hasChildren(['k0', 'k17'])", .true, data: pathData, wildcards: pathWildcards),
        Case("root.child('x/big/k12').val() == 12 && root.child('x/big').child('k' + 3).val() == 3", .true, data: pathData, wildcards: pathWildcards),
        // Integer-like keys are found by their text.
        Case("root.child('n/1/2').val() == true && root.hasChild('n/10') && root.child('n/-5').val() == 2 && !root.hasChild('n/01')", .true, data: pathData, wildcards: pathWildcards),
        // A key that cannot exist (a dot) simply does not, whether tested or read.
        Case("root.child('x/a.b').exists() == false && root.child('x/a.b').val() == null && !root.hasChild('x/a.b')", .true, data: pathData, wildcards: pathWildcards),
    ]

    @Test("snapshot paths along and off the evaluation path", arguments: pathCases)
    func paths(_ fact: Case) throws {
        #expect(try evaluate(fact.rule, auth: fact.auth, data: fact.data, wildcards: fact.wildcards) == fact.expected)
    }

    @Test(
        "rejected at load (security-rules.md §1.4)",
        arguments: [
            "root.hasChildren([])", "root.exists", "root.child()", "root.val(1)", "'a'.length()", "now.foo",
            "query == null", "[1] == [1]", "/a/ == 1", "root.exists() && 1", "!'a'", "root.child(1).exists()",
            "data.parent", "auth()", "root.child('a') == root.child('a')",
            "'a'.matches(/a/g)", "'a'.matches(/(^a)/)", "'a'.matches(/a$b/)", "'a'.matches(/a|/)", "'a'.matches(/()/)",
            "'a'.matches(/a**/)", "'a'.matches(/a*?/)", "'a'.matches(/(?:a)/)", "'a'.matches(/\\b/)", "'a'.matches(/\\1/)",
            "'a'.matches(/[]/)", "'a'.matches(/[z-a]/)", "'a'.matches(/a{2,1}/)", "'a'.matches(/a{1001}/)", "'a'.matches(/{/)",
            "'a'.matches(/+/)", "'a'.matches(/(a/)", "'a'.matches(/a)/)", "'a'.matches(/[a/)", "'a'.contains()",
            "'a'.replace('a')", "'a'.toLowerCase('x')", "'a'.foo()", "root.foo()", "1.foo == 1", "true.x",
            "root.child('a').val().child('b')", "query.orderByKey()", "newData.val() == 1",
            "root.child('a') ? true : false", "true ? root : 'a'", "typeof auth == 'object'", "this == null", "+1 == 1",
            "~1 == 1", "1 & 1 == 1", "1 << 2 == 4", "a => a", "{} == null", "auth.uid ?? true", "x++ == 1",
        ])
    func rejected(_ rule: String) throws {
        #expect(try evaluate(rule) == .invalid)
    }

    @Test("non-boolean operands: warned by default, rejected in strict mode")
    func strictBooleans() throws {
        let text = #"{"rules": {".read": "auth.token.admin && auth.uid != null"}}"#
        let lenient = try RulesTestSupport.load(text)
        #expect(lenient.warnings.count == 1)
        #expect(lenient.warnings.first?.message.contains("should be boolean") == true)
        #expect(lenient.warnings.first?.position == SourcePosition(line: 1, column: 22))
        let strict = RulesTestSupport.loadError(text, options: RulesOptions(strictBooleanOperands: true))
        #expect(strict?.errors.first?.message.contains("must be boolean") == true)
    }

    @Test("query variables from query parameters (§7)")
    func queryVariables() throws {
        func query(_ wire: String) throws -> QueryParams { try QueryParams(wireObject: RulesTestSupport.json(wire)) }
        #expect(try evaluate("query.orderByChild == 'foo/bar'", query: query(#"{"i":"foo/bar"}"#)) == .true)
        #expect(try evaluate("query.orderByKey == false && query.orderByValue", query: query(#"{"i":".value"}"#)) == .true)
        #expect(try evaluate("query.orderByKey && query.orderByPriority == false", query: query(#"{"i":".priority"}"#)) == .true)
        #expect(try evaluate("query.orderByKey && query.startAt == 'a'", query: query(#"{"i":".key","sp":"a"}"#)) == .true)
        #expect(try evaluate("query.endAt == 3 && query.equalTo == null", query: query(#"{"i":".value","ep":3}"#)) == .true)
        #expect(
            try evaluate(
                "query.equalTo == true && query.startAt == true && query.endAt == true",
                query: query(#"{"i":".value","sp":true,"ep":true}"#)) == .true)
        #expect(try evaluate("query.equalTo == null", query: query(#"{"i":".value","sp":1,"ep":2}"#)) == .true)
        #expect(try evaluate("query.limitToLast == 10 && query.limitToFirst == null", query: query(#"{"l":10,"vf":"r"}"#)) == .true)
        #expect(try evaluate("query.limitToFirst <= 1000", query: query(#"{"l":5,"vf":"l"}"#)) == .true)
        #expect(try evaluate("query.limitToFirst <= 1000") == .error)
    }
}
