import Foundation

/// The operator's configuration: `Config/canopy.json` over built-in defaults, then `CANOPY_*`
/// environment variables, then command-line flags (applied by the command).
struct CanopyConfiguration: Decodable {
    struct Server: Decodable {
        var host: String
        var port: Int
        var eventLoops: Int
        var maxConnections: Int
        var idleTimeoutSeconds: Double
        var handshakeTimeoutSeconds: Double
        var shutdownDeadlineSeconds: Double
        var maxRequestLineBytes: Int
        var maxHeaderBytes: Int
        var maxBodyBytes: Int
        var allowedOrigins: [String]
        /// Bytes a second each connection may send (0: no limit), what it may send at once, and how long it may
        /// stay throttled before it is closed.
        var maxInboundBytesPerSecond: Int
        var inboundBurstBytes: Int
        var inboundThrottleSeconds: Double
        var echoPath: String?
        var broadcastPath: String?
    }

    /// Whether the server listens on a loopback address only (what the emulator-style defaults need).
    var listensOnLoopbackOnly: Bool {
        ["127.0.0.1", "::1", "localhost"].contains(server.host)
    }

    struct WebSocket: Decodable {
        var maxMessageBytes: Int
        var permessageDeflate: Bool
        var compressionThresholdBytes: Int
    }

    struct Outbound: Decodable {
        var lowWaterMarkBytes: Int
        var highWaterMarkBytes: Int
        var hardLimitBytes: Int
    }

    struct TLS: Decodable {
        var enabled: Bool
        var port: Int
        var certificate: String
        var privateKey: String
    }

    struct Data: Decodable {
        var directory: String
        var defaultNamespace: String
        var maxNamespaces: Int
        /// Namespaces any client may create (names, or patterns with `*`); others need the admin credential.
        var namespaces: [String]
        var fsync: String
    }

    struct Auth: Decodable {
        var secret: String?
        var publicKeys: String?
        var audience: String?
        var issuer: String?
        var adminToken: String?
        var allowUnsignedTokens: Bool
        var clockSkewSeconds: Double
        /// Firebase ID tokens of this project (RS256, keys from ``jwksURL`` or Google's certificates).
        var firebaseProjectId: String?
        /// Where signing keys are fetched from: an OpenID Connect issuer's JWKS, or Google's certificate map.
        var jwksURL: String?
        /// CA certificates trusted (besides the system's) when fetching keys, for ID tokens and App Check.
        var keysCAFile: String?
        /// Shortest time between two fetches a token naming an unknown key may cause.
        var keysMinRefreshSeconds: Double
        /// Seconds one fetch of the keys may take.
        var keysFetchTimeoutSeconds: Double
    }

    struct AppCheck: Decodable {
        /// The Firebase project number whose App Check tokens are verified; `nil`: App Check is off.
        var projectNumber: String?
        /// `off`, `monitor` or `enforce`.
        var mode: String
        /// Where App Check's signing keys are published.
        var jwksURL: String

        private enum CodingKeys: String, CodingKey {
            case projectNumber, mode, jwksURL
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            // A project number is digits: accept it written as a JSON number too.
            if let number = try? container.decodeIfPresent(Int64.self, forKey: .projectNumber) {
                projectNumber = String(number)
            } else {
                projectNumber = try container.decodeIfPresent(String.self, forKey: .projectNumber)
            }
            mode = try container.decode(String.self, forKey: .mode)
            jwksURL = try container.decode(String.self, forKey: .jwksURL)
        }
    }

    struct Gateway: Decodable {
        var conflationThresholdBytes: Int
        var maxListensPerConnection: Int
        var maxOnDisconnectPerConnection: Int
        var maxAuthAttemptsPerSecond: Int
        var maxOutstandingRequestsPerConnection: Int
        var longPollHoldSeconds: Double
        var longPollIdleTimeoutSeconds: Double
    }

    struct REST: Decodable {
        var corsOrigins: [String]
        var keepAliveSeconds: Double
        var requireIndexes: Bool
    }

    struct Rules: Decodable {
        var path: String
        var directory: String?
        var allowOpen: Bool
        var explainDenials: Bool
    }

    struct Log: Decodable {
        var format: String
        var level: String
    }

    struct Cluster: Decodable {
        /// NATS server URLs of the cluster's JetStream; empty: a single node.
        var nats: [String]
        var replicas: Int
        /// Log positions between a namespace's snapshots (0: never; the log then grows for ever).
        var snapshotEvery: Int
    }

    var server: Server
    var webSocket: WebSocket
    var outbound: Outbound
    var tls: TLS
    var data: Data
    var auth: Auth
    var appCheck: AppCheck
    var gateway: Gateway
    var rest: REST
    var rules: Rules
    var log: Log
    var cluster: Cluster
    var console: Console

    struct Console: Decodable {
        /// Serve the web console at `/.console/`.
        var enabled: Bool
        /// A folder to serve its files from instead of the ones built into the binary (read once at start);
        /// `nil` or empty: the built-in files.
        var directory: String?
    }
}

/// Why the configuration could not be loaded; every message names the key path or file.
struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
}

/// Builds a ``CanopyConfiguration`` from defaults, an optional file and the environment.
enum ConfigurationLoader {
    /// The built-in defaults; `Config/canopy.json` mirrors them for operators to edit.
    static var defaults: [String: Any] { [
        "server": [
            "host": "127.0.0.1", "port": 9000, "eventLoops": 0, "maxConnections": 50000,
            "idleTimeoutSeconds": 120, "handshakeTimeoutSeconds": 10, "shutdownDeadlineSeconds": 10,
            "maxRequestLineBytes": 8192, "maxHeaderBytes": 16384, "maxBodyBytes": 16_777_216,
            "allowedOrigins": [String](), "maxInboundBytesPerSecond": 8_388_608, "inboundBurstBytes": 33_554_432,
            "inboundThrottleSeconds": 30, "echoPath": NSNull(), "broadcastPath": NSNull(),
        ] as [String: Any],
        "webSocket": ["maxMessageBytes": 16_777_216, "permessageDeflate": true, "compressionThresholdBytes": 64],
        "outbound": ["lowWaterMarkBytes": 262_144, "highWaterMarkBytes": 1_048_576, "hardLimitBytes": 8_388_608],
        "tls": ["enabled": false, "port": 9443, "certificate": "", "privateKey": ""] as [String: Any],
        "data": [
            "directory": "data", "defaultNamespace": "default", "maxNamespaces": 64, "namespaces": [String](),
            "fsync": "always",
        ] as [String: Any],
        "auth": [
            "secret": NSNull(), "publicKeys": NSNull(), "audience": NSNull(), "issuer": NSNull(),
            "adminToken": NSNull(), "allowUnsignedTokens": false, "clockSkewSeconds": 60,
            "firebaseProjectId": NSNull(), "jwksURL": NSNull(), "keysCAFile": NSNull(), "keysMinRefreshSeconds": 30,
            "keysFetchTimeoutSeconds": 10,
        ] as [String: Any],
        "appCheck": [
            "projectNumber": NSNull(), "mode": "monitor", "jwksURL": "https://firebaseappcheck.googleapis.com/v1/jwks",
        ] as [String: Any],
        "gateway": [
            "conflationThresholdBytes": 262_144, "maxListensPerConnection": 10_000, "maxOnDisconnectPerConnection": 1_000,
            "maxAuthAttemptsPerSecond": 10, "maxOutstandingRequestsPerConnection": 10_000,
            "longPollHoldSeconds": 20, "longPollIdleTimeoutSeconds": 30,
        ],
        "rest": ["corsOrigins": [String](), "keepAliveSeconds": 30, "requireIndexes": true] as [String: Any],
        "rules": [
            "path": "Config/database.rules.json", "directory": NSNull(), "allowOpen": false, "explainDenials": false,
        ] as [String: Any],
        "log": ["format": "text", "level": "info"],
        "cluster": ["nats": [String](), "replicas": 3, "snapshotEvery": 10_000] as [String: Any],
        "console": ["enabled": true, "directory": NSNull()] as [String: Any],
    ] }

    /// Loads the configuration.
    /// - Parameters:
    ///   - path: a JSON file to read, or `nil` for defaults only.
    ///   - environment: variables named `CANOPY_<SECTION>_<KEY>` in upper snake case
    ///     (`CANOPY_SERVER_PORT`, `CANOPY_DATA_DIRECTORY`, `CANOPY_LOG_FORMAT`) override the file.
    static func load(path: String?, environment: [String: String]) throws -> CanopyConfiguration {
        var tree = defaults
        if let path {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(description: "cannot read config file \(path)")
            }
            let parsed: Any
            do {
                parsed = try JSONSerialization.jsonObject(with: contents)
            } catch {
                throw ConfigurationError(description: "\(path) is not valid JSON: \(error.localizedDescription)")
            }
            guard let object = parsed as? [String: Any] else {
                throw ConfigurationError(description: "\(path): the top level must be an object")
            }
            tree = try merge(object, into: tree, keyPath: "", file: path)
        }
        tree = try applyEnvironment(environment, to: tree, types: defaults, keyPath: [])
        let data = try JSONSerialization.data(withJSONObject: tree)
        do {
            return try JSONDecoder().decode(CanopyConfiguration.self, from: data)
        } catch let DecodingError.typeMismatch(type, context) {
            throw ConfigurationError(description: "\(keyPath(context.codingPath)) must be a \(type)")
        } catch let DecodingError.valueNotFound(type, context) {
            throw ConfigurationError(description: "\(keyPath(context.codingPath)) must be a \(type)")
        } catch {
            throw ConfigurationError(description: "invalid configuration: \(error)")
        }
    }

    private static func keyPath(_ path: [any CodingKey]) -> String {
        path.map(\.stringValue).joined(separator: ".")
    }

    private static func merge(_ overlay: [String: Any], into base: [String: Any], keyPath: String, file: String) throws
        -> [String: Any]
    {
        var result = base
        for (key, value) in overlay {
            let path = keyPath.isEmpty ? key : "\(keyPath).\(key)"
            guard let existing = base[key] else {
                throw ConfigurationError(description: "\(file): unknown key \(path)")
            }
            if let nestedBase = existing as? [String: Any] {
                guard let nested = value as? [String: Any] else {
                    throw ConfigurationError(description: "\(file): \(path) must be an object")
                }
                result[key] = try merge(nested, into: nestedBase, keyPath: path, file: file)
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// Applies `CANOPY_*` variables; `types` (the defaults) says how to parse each leaf.
    private static func applyEnvironment(
        _ environment: [String: String], to tree: [String: Any], types: [String: Any], keyPath: [String]
    ) throws -> [String: Any] {
        var result = tree
        for (key, value) in types {
            let path = keyPath + [key]
            if let nested = value as? [String: Any] {
                result[key] = try applyEnvironment(
                    environment, to: tree[key] as? [String: Any] ?? nested, types: nested, keyPath: path)
                continue
            }
            let name = "CANOPY_" + path.map(upperSnake).joined(separator: "_")
            guard let text = environment[name] else { continue }
            switch value {
            case is [String]:
                result[key] = text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            case is Bool:
                guard let flag = Bool(text.lowercased()) else {
                    throw ConfigurationError(description: "\(name) must be true or false")
                }
                result[key] = flag
            case is Int, is Double:
                guard let number = Double(text) else { throw ConfigurationError(description: "\(name) must be a number") }
                result[key] = number
            default:
                result[key] = text.isEmpty ? NSNull() : text
            }
        }
        return result
    }

    /// `idleTimeoutSeconds` → `IDLE_TIMEOUT_SECONDS`; an acronym stays one word: `jwksURL` → `JWKS_URL`,
    /// `keysCAFile` → `KEYS_CA_FILE`.
    static func upperSnake(_ key: String) -> String {
        let characters = Array(key)
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if !previous.isUppercase || next?.isLowercase == true { out += "_" }
            }
            out += character.uppercased()
        }
        return out
    }
}
