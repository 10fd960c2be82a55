/// Where a ``TokenVerifier`` or an ``AppCheckVerifier`` fetches its signing keys from, and how it keeps them fresh.
///
/// This module does no networking: ``fetcher`` fetches the document (the server gives it TLS's `HTTPSClient`, tests
/// their own). The document at ``url`` is a JWKS (RFC 7517 §5) or Google's certificate map (`{"<kid>":"-----BEGIN
/// CERTIFICATE-----…"}`), told apart by content as for key files. It is fetched in the background at start, again
/// when the response's `Cache-Control: max-age` runs out, and on demand when a token names a `kid` the cached keys
/// lack (at most once per ``minimumRefreshSeconds``). A failed fetch keeps the cached keys and is retried.
public struct RemoteKeySource: Sendable {
    /// Google's published X.509 certificates for Firebase ID tokens.
    public static let firebaseIDTokenCertificates =
        "https://www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com"
    /// The public JWKS of Firebase App Check tokens.
    public static let appCheckJWKS = "https://firebaseappcheck.googleapis.com/v1/jwks"

    /// Fetches the document at a URL: its body and `Cache-Control` lifetime. Called on the key set's own queue,
    /// never on an event loop, so it may block (within ``fetchTimeoutSeconds``).
    public typealias Fetcher = @Sendable (_ url: String) throws(KeyDocumentFetchError) -> FetchedKeyDocument

    /// The document's `https://` URL.
    public var url: String
    /// Fetches it.
    public var fetcher: Fetcher
    /// Shortest time between two fetches that a token with an unknown `kid` may cause; also the shortest cache
    /// lifetime and the first retry delay after a failure.
    public var minimumRefreshSeconds: Double
    /// Seconds one fetch may take in all (connect, TLS, response); a token waiting for a refresh waits at most this
    /// long (plus a second).
    public var fetchTimeoutSeconds: Double
    /// Largest document accepted: 1 MiB (Google's certificate map is about 3 KiB).
    public var maxDocumentBytes: Int
    /// Cache lifetime when the response has no `max-age`.
    public var defaultCacheSeconds: Double
    /// Longest cache lifetime, whatever `max-age` says.
    public var maximumCacheSeconds: Double
    /// Called (on the fetch queue) after every fetch, for the server log.
    public var events: (@Sendable (RemoteKeyEvent) -> Void)?

    /// Creates a source with the defaults: refreshes at most every 30 s on demand, 10 s per fetch, 1 MiB, one hour
    /// without `max-age`, one day at most.
    public init(url: String, fetcher: @escaping Fetcher, minimumRefreshSeconds: Double = 30,
                fetchTimeoutSeconds: Double = 10)
    {
        self.url = url
        self.fetcher = fetcher
        self.minimumRefreshSeconds = minimumRefreshSeconds
        self.fetchTimeoutSeconds = fetchTimeoutSeconds
        maxDocumentBytes = KeyFileReader.maxKeyFileBytes
        defaultCacheSeconds = 3600
        maximumCacheSeconds = 86_400
    }
}

/// A fetched key document.
public struct FetchedKeyDocument: Sendable {
    /// The body.
    public var body: [UInt8]
    /// `Cache-Control: max-age` in seconds, when the response had one (`no-cache`/`no-store` count as 0).
    public var maxAgeSeconds: Double?

    /// Creates a document.
    public init(body: [UInt8], maxAgeSeconds: Double?) {
        self.body = body
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// The lifetime a `Cache-Control` header value grants (RFC 9111 §5.2.2): `max-age` (`s-maxage` is for shared
    /// caches), 0 for `no-store` or `no-cache`, `nil` when it says nothing about freshness.
    public static func maxAge(cacheControl: String?) -> Double? {
        guard let cacheControl else { return nil }
        var maxAge: Double?
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1)
            let name = parts[0].trimmingCharacters(in: " \t").lowercased()
            switch name {
            case "no-store", "no-cache":
                return 0
            case "max-age":
                guard parts.count == 2 else { continue }
                let value = parts[1].trimmingCharacters(in: " \t\"")
                guard !value.isEmpty, value.count <= 12, value.allSatisfy(\.isNumber), let seconds = Double(value)
                else { continue }
                maxAge = seconds
            default:
                continue
            }
        }
        return maxAge
    }
}

/// Why a key document could not be fetched.
public struct KeyDocumentFetchError: Error, Sendable, CustomStringConvertible {
    /// For the log.
    public var description: String

    /// Creates an error.
    public init(_ description: String) {
        self.description = description
    }
}

/// What happened to a key set, for the server log.
public enum RemoteKeyEvent: Sendable {
    /// The document was fetched and its keys replaced the cached ones.
    case fetched(url: String, keyIDs: [String], cacheSeconds: Double, ignored: [String])
    /// A fetch failed; `keptKeys` cached keys stay in use, the next attempt is in `retrySeconds`.
    case failed(url: String, reason: String, keptKeys: Int, retrySeconds: Double)
}

/// How a key set is doing, for `/.metrics`.
public struct RemoteKeyStatus: Sendable {
    /// The document's URL.
    public var url: String
    /// Keys in use now.
    public var keyCount: Int
    /// Fetches that succeeded.
    public var fetches: Int
    /// Fetches that failed.
    public var failures: Int
    /// Seconds since the keys in use were fetched, `nil` before the first success.
    public var ageSeconds: Double?
}

extension StringProtocol {
    /// The text without leading and trailing characters of `set`.
    func trimmingCharacters(in set: String) -> String {
        let members = Set(set)
        return String(drop { members.contains($0) }.reversed().drop { members.contains($0) }.reversed())
    }
}
