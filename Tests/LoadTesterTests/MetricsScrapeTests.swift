import Testing

@testable import WSLoad

@Suite("MetricsScrape")
struct MetricsScrapeTests {
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
        let totals = MetricsScrape.parse(text)
        #expect(totals["canopy_push_frames_encoded_total"] == 12)
        #expect(totals["canopy_push_frames_delivered_total"] == 120.5)
        #expect(totals["other"] == 1000)
        #expect(totals["broken_line"] == nil)
    }

    @Test("reads plain and chunked response bodies and refuses other statuses")
    func readsBodies() throws {
        let plain = Array("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc".utf8)
        #expect(try MetricsScrape.body(of: plain) == Array("abc".utf8))
        let chunked = Array(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n".utf8)
        #expect(try MetricsScrape.body(of: chunked) == Array("abcde".utf8))
        #expect(throws: MetricsScrape.Failure.self) {
            try MetricsScrape.body(of: Array("HTTP/1.1 404 Not Found\r\n\r\n".utf8))
        }
    }

    @Test("parses metrics URLs")
    func parsesURLs() throws {
        let scrape = try MetricsScrape(url: "http://127.0.0.1:9000/.metrics")
        #expect(scrape.host == "127.0.0.1")
        #expect(scrape.port == 9000)
        #expect(scrape.path == "/.metrics")
        #expect(throws: MetricsScrape.Failure.self) { try MetricsScrape(url: "https://x/.metrics") }
        #expect(throws: MetricsScrape.Failure.self) { try MetricsScrape(url: "http://x:0/") }
    }
}
