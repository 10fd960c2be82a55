import DataModel
import Dispatch
import Foundation
import TLS

/// Where and how to reach a database.
public struct DatabaseConfiguration: Sendable {
    /// The server's host name or address.
    public var host: String
    /// Its port.
    public var port: Int
    /// The namespace (`ns`): one server holds many databases.
    public var namespace: String
    /// Connect with TLS (`wss`).
    public var secure: Bool
    /// PEM certificates to trust for TLS (`nil`: the system's trust store).
    public var trustedCertificatesPath: String?
    /// A credential (an ID token, or the server's admin credential) sent with every connection; `nil`: none.
    public var authToken: String?
    /// Where blocks run: the main queue on macOS, a serial queue of the database's own elsewhere. The
    /// database's own queue is run by its connection's thread (through `sync`): a block there that waits for the
    /// database's network work (a semaphore that a server change seen elsewhere signals) stalls the connection.
    public var callbackQueue: DispatchQueue?

    /// A configuration for `namespace` on `host`:`port`.
    public init(host: String, port: Int, namespace: String, secure: Bool = false) {
        self.host = host
        self.port = port
        self.namespace = namespace
        self.secure = secure
    }

    /// A configuration from a database URL: `http(s)://host:port?ns=namespace` (an emulator-style URL) or
    /// `https://namespace.example.com` (the namespace is the host's first label); `nil` for anything else.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              ["http", "https", "ws", "wss"].contains(scheme), let host = components.host, !host.isEmpty
        else { return nil }
        secure = scheme == "https" || scheme == "wss"
        self.host = host
        port = components.port ?? (secure ? 443 : 80)
        if let ns = components.queryItems?.first(where: { $0.name == "ns" })?.value, !ns.isEmpty {
            namespace = ns
        } else if let label = host.split(separator: ".").first, host.contains("."),
                  Double(label) == nil {
            namespace = String(label)
        } else {
            namespace = "default"
        }
    }
}

/// A database (the SDK's `Database`): the entry point for references, and the connection's switch.
public final class Database: @unchecked Sendable {  // immutable; the engine is thread-safe
    /// The configuration it was made with.
    public let configuration: DatabaseConfiguration
    /// Where every block runs.
    public let callbackQueue: DispatchQueue
    let engine: SyncEngine

    private static let instances = NSLock()
    nonisolated(unsafe) private static var byURL: [String: Database] = [:]

    /// The database at `url` (one instance per URL): `http://127.0.0.1:9000?ns=name` or
    /// `https://name.example.com`.
    public static func database(url: String) -> Database {
        instances.lock()
        defer { instances.unlock() }
        if let existing = byURL[url] { return existing }
        let configuration = DatabaseConfiguration(url: url)
            ?? DatabaseConfiguration(host: "127.0.0.1", port: 9000, namespace: "default")
        let database = Database(configuration: configuration)
        byURL[url] = database
        return database
    }

    /// A database connecting as `configuration` says.
    public init(configuration: DatabaseConfiguration) {
        self.configuration = configuration
        #if canImport(Darwin)
        callbackQueue = configuration.callbackQueue ?? .main
        let ownQueue = false
        #else
        callbackQueue = configuration.callbackQueue ?? DispatchQueue(label: "canopy.database.callbacks")
        let ownQueue = configuration.callbackQueue == nil
        #endif
        var settings = PersistentConnection.Settings(
            host: configuration.host, port: configuration.port, secure: configuration.secure,
            namespace: configuration.namespace)
        settings.credential = configuration.authToken
        if configuration.secure {
            settings.tlsContext = try? TLSContext.client(trustedCAPath: configuration.trustedCertificatesPath)
        }
        engine = SyncEngine(settings: settings, callbackQueue: callbackQueue, ownQueue: ownQueue)
        engine.database = self
    }

    deinit {
        engine.shutDown()
    }

    /// The database's URL.
    public var url: String {
        "\(configuration.secure ? "https" : "http")://\(configuration.host):\(configuration.port)?ns=\(configuration.namespace)"
    }

    /// The root location.
    public func reference() -> DatabaseReference {
        DatabaseReference(database: self, path: .root)
    }

    /// The location at `path`.
    public func reference(withPath path: String) -> DatabaseReference {
        reference().child(path)
    }

    /// Connects again after ``goOffline()``.
    public func goOnline() {
        engine.loop.post { [engine] in engine.connection.goOnline() }
    }

    /// Disconnects; writes wait (and local observers still see them) until ``goOnline()``.
    public func goOffline() {
        engine.loop.post { [engine] in engine.connection.goOffline() }
    }
}
