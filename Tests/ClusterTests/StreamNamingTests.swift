@testable import Cluster
import Testing

/// A namespace's log stream is named from the namespace, and the name read back, so that every node learns the
/// cluster's namespaces from JetStream's list of streams.
@Suite struct StreamNamingTests {
    @Test(arguments: ["default", "my-app-default-rtdb", "A_z-09", "x"])
    func aLogStreamNamesItsNamespace(namespace: String) {
        let stream = JetStreamLog.streamPrefix + JetStreamLog.hex(namespace)
        #expect(JetStreamLog.namespace(ofStream: stream) == namespace)
    }

    @Test(arguments: [
        "CANOPYS_64656661756c74",  // a snapshot stream
        "OTHER_64656661756c74",    // another application's
        "CANOPY_",
        "CANOPY_646",              // half a byte
        "CANOPY_6g",               // not hexadecimal
        "CANOPY_64656661756C74",   // uppercase: never written
        "CANOPY_ff",               // not UTF-8
    ])
    func otherStreamsNameNoNamespace(stream: String) {
        #expect(JetStreamLog.namespace(ofStream: stream) == nil)
    }
}
