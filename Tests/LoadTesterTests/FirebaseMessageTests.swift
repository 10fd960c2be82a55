import Testing

@testable import LoadTester

@Suite("FirebaseMessage")
struct FirebaseMessageTests {
    @Test("recognizes the server hello")
    func recognizesHello() {
        let hello = #"{"t":"c","d":{"t":"h","d":{"ts":1718049600000,"v":"5","h":"localhost:9000","s":"abc"}}}"#
        withBytes(hello) { #expect(FirebaseMessage.classify($0) == .hello) }
        withBytes(#"{"t":"c","d":{"t":"o","d":{}}}"#) { #expect(FirebaseMessage.classify($0) == .control) }
    }

    @Test("reads the shutdown message's reason")
    func readsShutdown() {
        let shutdown = #"{"t":"c","d":{"t":"s","d":"namespace x does not exist"}}"#
        withBytes(shutdown) { bytes in
            guard case .shutdown(let reason) = FirebaseMessage.classify(bytes) else {
                Issue.record("not a shutdown: \(FirebaseMessage.classify(bytes))")
                return
            }
            #expect(String(decoding: bytes[reason], as: UTF8.self) == "namespace x does not exist")
        }
    }

    @Test("reads responses with their request number and status")
    func readsResponses() {
        withBytes(#"{"t":"d","d":{"r":1,"b":{"s":"ok","d":{}}}}"#) { bytes in
            guard case .response(let request, let ok, let status) = FirebaseMessage.classify(bytes) else {
                Issue.record("not a response")
                return
            }
            #expect(request == 1)
            #expect(ok)
            #expect(String(decoding: bytes[status], as: UTF8.self) == "ok")
        }
        withBytes(#"{"t":"d","d":{"r":7,"b":{"s":"permission_denied","d":"Permission denied"}}}"#) { bytes in
            guard case .response(7, false, let status) = FirebaseMessage.classify(bytes) else {
                Issue.record("not a failed response")
                return
            }
            #expect(String(decoding: bytes[status], as: UTF8.self) == "permission_denied")
        }
    }

    @Test("reads data and merge pushes in any member order", arguments: [
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room0","d":{"pad":"xx","seq":4,"ts":123,"w":2}}}}"#,
        #"{"d":{"b":{"d":{"w":2,"ts":123,"seq":4},"p":"bench/room0"},"a":"d"},"t":"d"}"#,
        #"{ "t" : "d" , "d" : { "a" : "m" , "b" : { "p" : "/bench/room0/" , "d" : "#
            + #"{ "seq" : 4 , "ts" : 123 , "w" : 2 } } "#
            + " } }",
    ])
    func readsPushes(text: String) {
        withBytes(text) { bytes in
            guard case .push(_, let path, let data) = FirebaseMessage.classify(bytes) else {
                Issue.record("not a push")
                return
            }
            #expect(FirebaseMessage.relation(of: bytes, path, to: Array("/bench/room0".utf8)) == .same)
            #expect(FirebaseMessage.relation(of: bytes, path, to: Array("/bench/room1".utf8)) == nil)
            #expect(FirebaseMessage.relation(of: bytes, path, to: Array("/bench".utf8)) == .below)
            #expect(FirebaseMessage.relation(of: bytes, path, to: Array("/".utf8)) == .below)
            #expect(FirebaseMessage.relation(of: bytes, path, to: Array("/bench/room".utf8)) == nil)
            #expect(BenchValue(bytes, objectAt: data) == BenchValue(sequence: 4, sentAt: 123, writer: 2))
        }
    }

    @Test("tells other pushes and broken messages apart")
    func classifiesTheRest() {
        withBytes(#"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"x"}}}"#) {
            #expect(FirebaseMessage.classify($0) == .otherPush)
        }
        for text in [#"{"t":"x","d":{}}"#, "not json", #"{"t":"d","d":{"a":"d","b":{"d":1}}}"#, #"{"t":"d"}"#] {
            withBytes(text) { #expect(FirebaseMessage.classify($0) == .malformed) }
        }
    }

    @Test("finds no benchmark value in null or in foreign data")
    func rejectsForeignData() {
        for text in ["null", #"{"seq":1,"ts":2}"#, #"{"seq":"1","ts":2,"w":0}"#, "[1]"] {
            withBytes(text) { #expect(BenchValue($0, objectAt: 0) == nil) }
        }
    }
}

@Suite("BenchPush")
struct BenchPushTests {
    static let prefix = BenchPush.prefix(path: Array("/bench/room3".utf8))

    private func value(_ text: String) -> BenchValue? {
        Self.prefix.withUnsafeBufferPointer { prefix in
            withBytes(text) { BenchPush.value($0, prefix: prefix, closers: 3) }
        }
    }

    @Test("reads an update in the exact shape Canopy sends")
    func readsExactShape() {
        let text = #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"xxxx","seq":12,"ts":3456,"w":7}}}}"#
        #expect(value(text) == BenchValue(sequence: 12, sentAt: 3456, writer: 7))
        #expect(value(#"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"","seq":1,"ts":0,"w":0}}}}"#) != nil)
    }

    @Test("leaves every other shape to the general scanner", arguments: [
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room30","d":{"pad":"xx","seq":1,"ts":2,"w":0}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"x\"x","seq":1,"ts":2,"w":0}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"xx","seq":1,"ts":2,"w":0},"t":5}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"xx","seq":1.5,"ts":2,"w":0}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"xx","seq":1,"ts":2,"w":0}}}} "#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"pad":"xx","seq":1,"ts":2,"w":0}}}"#,
        #"{"t":"d","d":{"a":"m","b":{"p":"/bench/room3","d":{"pad":"xx","seq":1,"ts":2,"w":0}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":{"seq":1,"ts":2,"w":0,"pad":"xx"}}}}"#,
        #"{"t":"d","d":{"a":"d","b":{"p":"/bench/room3","d":null}}}"#,
    ])
    func refusesOtherShapes(text: String) {
        #expect(value(text) == nil)
    }
}

@Suite("BenchPush on bare objects (MQTT and raw WebSocket)")
struct BarePushTests {
    private func value(_ text: String) -> BenchValue? {
        withBytes(text) { BenchPush.value($0, prefix: UnsafeBufferPointer(start: nil, count: 0), closers: 0) }
    }

    @Test("reads the bare update object")
    func readsBareObject() {
        #expect(value(#"{"pad":"xxxxxxxx","seq":3,"ts":99,"w":1}"#) == BenchValue(sequence: 3, sentAt: 99, writer: 1))
    }

    @Test("refuses trailing bytes and wrapped objects", arguments: [
        #"{"pad":"xxxxxxxx","seq":3,"ts":99,"w":1}}"#, #"{"pad":"xxxxxxxx","seq":3,"ts":99,"w":1} "#,
        #"[{"pad":"xxxxxxxx","seq":3,"ts":99,"w":1}]"#,
    ])
    func refusesOtherShapes(text: String) {
        #expect(value(text) == nil)
    }
}
