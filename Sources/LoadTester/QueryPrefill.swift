import Primitives
import TLS

/// Writes the query scenario's starting list over REST (`PUT /bench/feed.json`), replacing what an earlier run
/// left, so that every subscriber's `limitToLast(K)` window starts full and each new child pushes one out.
struct QueryPrefill {
    let configuration: BenchConfiguration
    let server: ServerURL
    let tlsContext: TLSContext?

    /// The list: `p<i>` children ordered before every child the writers add (`ts` and `seq` count from 1 and 0).
    var body: [UInt8] {
        var text = "{"
        for index in 0..<configuration.prefill {
            if index > 0 { text += "," }
            text += #""p\#(index)":{"pad":"","seq":0,"ts":\#(index + 1),"w":0}"#
        }
        return Array((text + "}").utf8)
    }

    func run() throws {
        var url = server.httpOrigin + "/bench/feed.json?ns=\(configuration.namespace)"
        if let token = configuration.authToken {
            url += "&auth=" + String(decoding: token.utf8.flatMap(Self.percentEncoded), as: UTF8.self)
        }
        do {
            let response = try BlockingHTTP(url: url, tlsContext: tlsContext).request(
                method: "PUT", body: body, headers: [("Content-Type", "application/json")])
            guard response.status == 200 else {
                let text = String(decoding: response.body.prefix(200), as: UTF8.self)
                throw BenchRunError.setup("PUT /bench/feed answered \(response.status): \(text)")
            }
        } catch let error as BenchRunError {
            throw error
        } catch {
            throw BenchRunError.setup("PUT /bench/feed: \(error)")
        }
    }

    /// A byte of a query value, percent-encoded unless unreserved (RFC 3986 §2.3).
    private static func percentEncoded(_ byte: UInt8) -> [UInt8] {
        if ASCIIBytes.isWordOrDash(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "~") {
            return [byte]
        }
        let hex = Array("0123456789ABCDEF".utf8)
        return [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
    }
}
