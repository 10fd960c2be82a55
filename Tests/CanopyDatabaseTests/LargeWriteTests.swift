import CanopyDatabase
import Foundation
import Synchronization
import Testing

/// A write longer than one protocol frame (16,384 units) goes out as a frame count and pieces, and arrives whole.
@Suite("Large writes", .serialized)
struct LargeWriteTests {
    @Test("a 100,000-character value is written in pieces and read back whole by another client")
    func largeValueRoundTrips() async throws {
        let server = try ServerUnderTest()
        let configuration = DatabaseConfiguration(host: "127.0.0.1", port: Int(server.port), namespace: "large")
        let writer = Database(configuration: configuration)
        let reader = Database(configuration: configuration)
        let text = String((0..<100_000).map { index in Character(UnicodeScalar(UInt8(97 + index % 26))) })
        let answer = Mutex<String?>(nil)
        writer.reference(withPath: "big").setValue(["text": text, "n": 1]) { error, _ in
            answer.withLock { $0 = error.map { "\($0)" } ?? "ok" }
        }
        for _ in 0..<1000 where answer.withLock({ $0 }) == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(answer.withLock { $0 } == "ok")
        let read = try await reader.reference(withPath: "big/text").getData()
        #expect((read.value as? String) == text)
    }
}
