import Testing
import Wire

@Suite("ConnectionParameters")
struct ConnectionParametersTests {
    @Test("the URLs the SDKs produce (wire-protocol.md §1.2), in any order")
    func sdkURLs() {
        let js = ConnectionParameters(query: "v=5&p=1:123:web:abc&ns=demo-app-default-rtdb")
        #expect(js.version == "5" && js.appID == "1:123:web:abc" && js.namespace == "demo-app-default-rtdb")
        #expect(js.lastSessionID == nil)
        let reconnect = ConnectionParameters(query: "v=5&ls=Zq3k8b&p=1:123:web:abc&ns=demo-app-default-rtdb")
        #expect(reconnect.lastSessionID == "Zq3k8b")
        let android = ConnectionParameters(query: "ns=demo-app-default-rtdb&v=5")
        let ios = ConnectionParameters(query: "v=5&ns=demo-app-default-rtdb&ls=abc")
        #expect(android.namespace == "demo-app-default-rtdb" && android.version == "5")
        #expect(ios.namespace == "demo-app-default-rtdb" && ios.lastSessionID == "abc")
    }

    @Test("an empty or missing namespace means the default one; unknown parameters are ignored")
    func defaults() {
        #expect(ConnectionParameters(query: "v=5&ns=").namespace == nil)
        #expect(ConnectionParameters(query: "v=5&r=f") == {
            var parameters = ConnectionParameters()
            parameters.version = "5"
            return parameters
        }())
        #expect(ConnectionParameters(query: "") == ConnectionParameters())
    }

    @Test("values are percent-decoded; malformed escapes stay as they are; the last repeat wins")
    func decoding() {
        let parameters = ConnectionParameters(query: "ac=a%2Eb%zz%4&ns=first&ns=my%2Ddb&s=x=y&p")
        #expect(parameters.appCheckToken == "a.b%zz%4")
        #expect(parameters.namespace == "my-db")
        #expect(parameters.transportSessionID == "x=y")
        #expect(parameters.appID == "")
    }
}
