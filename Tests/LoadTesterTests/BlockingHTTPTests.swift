import Testing

@testable import LoadTester

@Suite("BlockingHTTP and PrometheusText")
struct BlockingHTTPTests {
    @Test("sums samples per metric name and skips comments and bad lines")
    func sumsSamples() {
        let text = """
            # HELP canopy_push_frames_encoded_total Frames encoded.
            # TYPE canopy_push_frames_encoded_total counter
            canopy_push_frames_encoded_total 12
            canopy_push_frames_delivered_total{kind="d"} 100
            canopy_push_frames_delivered_total{kind="m",note="a b}"} 20.5 1718049600000
            broken_line
            other 1e3
            """
        let totals = PrometheusText.parse(text)
        #expect(totals["canopy_push_frames_encoded_total"] == 12)
        #expect(totals["canopy_push_frames_delivered_total"] == 120.5)
        #expect(totals["other"] == 1000)
        #expect(totals["broken_line"] == nil)
    }

    @Test("reads the status and plain or chunked bodies")
    func readsResponses() throws {
        let plain = try BlockingHTTP.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8))
        #expect(plain.status == 200)
        #expect(plain.body == Array("abc".utf8))
        let chunked = try BlockingHTTP.parse(
            Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n".utf8))
        #expect(chunked.body == Array("abcde".utf8))
        #expect(try BlockingHTTP.parse(Array("HTTP/1.1 404 Not Found\r\n\r\n".utf8)).status == 404)
        #expect(throws: BlockingHTTP.Failure.self) { try BlockingHTTP.parse(Array("HTTP/1.1 200 OK\r\n".utf8)) }
        #expect(throws: BlockingHTTP.Failure.self) { try BlockingHTTP.parse(Array("SSH-2.0\r\n\r\n".utf8)) }
    }

    @Test("parses URLs and refuses bad ones")
    func parsesURLs() throws {
        let metrics = try BlockingHTTP(url: "http://127.0.0.1:9000/.metrics", tlsContext: nil)
        #expect(metrics.host == "127.0.0.1")
        #expect(metrics.port == 9000)
        #expect(metrics.target == "/.metrics")
        let query = try BlockingHTTP(url: "http://[::1]:80?x=1", tlsContext: nil)
        #expect(query.host == "::1")
        #expect(query.target == "/?x=1")
        #expect(throws: BlockingHTTP.Failure.self) { try BlockingHTTP(url: "https://x/.metrics", tlsContext: nil) }
        #expect(throws: BlockingHTTP.Failure.self) { try BlockingHTTP(url: "http://x:0/", tlsContext: nil) }
        #expect(throws: BlockingHTTP.Failure.self) { try BlockingHTTP(url: "ftp://x/", tlsContext: nil) }
    }
}
