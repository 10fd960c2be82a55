// swift-tools-version:6.2
import PackageDescription

/// Settings every target shares (one list, applied in a loop as swift-log does).
let sharedSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Canopy",
    products: [
        .executable(name: "canopy", targets: ["canopy"]),
        .library(name: "CanopyDatabase", targets: ["CanopyDatabase"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // MARK: - leaves: C shims
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        // <sys/epoll.h>, which the Glibc module does not export (headers only, nothing to link).
        .systemLibrary(name: "CEpoll"),
        // nats.c, the official NATS C client (Debian's libnats-dev), for cluster mode's JetStream log.
        .systemLibrary(
            name: "CNats", pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]),

        // MARK: - base
        .target(name: "Primitives"),
        .target(name: "Transport", dependencies: ["CEpoll", "Primitives"]),
        .target(name: "HTTP1", dependencies: ["Primitives"]),
        .target(name: "DataModel", dependencies: ["Primitives"]),
        // The settings table of `canopy serve`: every setting's key, default, rule, environment name, flag and doc.
        .target(name: "Settings", dependencies: ["Primitives"]),

        // MARK: - protocol
        .target(name: "WebSocket", dependencies: ["HTTP1", "Primitives"]),
        .target(name: "WebSocketDeflate", dependencies: ["WebSocket", "CZlib", "Primitives"]),
        .target(name: "TLS", dependencies: ["COpenSSL", "Primitives"]),

        // MARK: - data
        .target(name: "Store", dependencies: ["DataModel", "Primitives"]),
        .target(name: "Wire", dependencies: ["DataModel", "Primitives"]),
        .target(name: "Auth", dependencies: ["DataModel", .product(name: "JWTKit", package: "jwt-kit")]),
        .target(name: "Rules", dependencies: ["DataModel", "Primitives"]),
        // The one authorization path: a rules revision as the policy the log, the gateway and the simulator ask.
        .target(name: "Authorization", dependencies: ["Rules", "Store", "DataModel"]),
        // Cluster mode: a namespace's log on a NATS JetStream stream (Store's `ReplicatedLog`).
        .target(name: "Cluster", dependencies: ["CNats", "Store", "Primitives"]),

        // MARK: - compose
        .target(
            name: "HTTPServer",
            dependencies: [
                "Primitives", "Transport", "TLS", "HTTP1", "WebSocket", "WebSocketDeflate",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // MARK: - gateway
        .target(
            name: "Gateway",
            dependencies: [
                "Auth", "Authorization", "Rules", "DataModel", "Store", "Wire", "HTTPServer", "HTTP1", "Transport",
                "WebSocket", "Primitives", "CEpoll",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),

        // MARK: - control plane: the admin endpoints and the console, in front of the gateway (never the reverse)
        .target(
            name: "ControlPlane",
            dependencies: [
                "Gateway", "Authorization", "Rules", "DataModel", "HTTPServer", "HTTP1", "Transport",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // MARK: - the Swift client (Linux and macOS: Dispatch sockets, never Transport's epoll)
        .target(name: "CanopyDatabase", dependencies: ["Wire", "DataModel", "WebSocket", "TLS", "Primitives"]),

        // Runnable examples of the Swift client (`swift run cars|feed|profile URL`).
        .executableTarget(name: "cars", dependencies: ["CanopyDatabase"], path: "Examples/cars"),
        .executableTarget(name: "feed", dependencies: ["CanopyDatabase"], path: "Examples/feed"),
        .executableTarget(name: "profile", dependencies: ["CanopyDatabase"], path: "Examples/profile"),

        // MARK: - load tester (a client: never the server's Gateway or Store)
        .target(
            name: "LoadTester",
            dependencies: [
                "CEpoll", "TLS", "WebSocket", "WebSocketDeflate", "Primitives",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]),

        // MARK: - what the build puts into the binary: the web console's files (Console/) and the version
        // The EmbedConsole plugin runs the ConsoleEmbedder generator on Console/ at build time, writing a Swift source
        // into the build folder: nothing generated is committed, so the binary's console cannot drift from Console/.
        // Sources/Embedded/Console is a symbolic link to Console/, excluded from the sources: through it SwiftPM
        // watches the folder, so adding or removing a console file plans the build again (an edit reruns the
        // generator, whose inputs are the files).
        .executableTarget(name: "ConsoleEmbedder", path: "Plugins/ConsoleEmbedder"),
        .plugin(name: "EmbedConsole", capability: .buildTool(), dependencies: ["ConsoleEmbedder"]),
        .target(name: "Embedded", exclude: ["Console"], plugins: ["EmbedConsole"]),

        // MARK: - executables
        .executableTarget(
            name: "canopy",
            dependencies: [
                "HTTPServer", "Gateway", "ControlPlane", "Auth", "Authorization", "Rules", "Store", "DataModel",
                "Transport", "LoadTester", "Cluster", "Embedded", "TLS", "Settings",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // MARK: - benchmarks
        .executableTarget(
            name: "StoreBench", dependencies: ["Store", "DataModel"], path: "benchmarks/StoreBench",
            exclude: ["README.md"]),
        .executableTarget(name: "DataBench", dependencies: ["DataModel"], path: "benchmarks/DataBench"),
        .executableTarget(name: "RulesBench", dependencies: ["Rules", "DataModel"], path: "benchmarks/RulesBench"),
        .executableTarget(name: "ClientBench", dependencies: ["CanopyDatabase"], path: "benchmarks/ClientBench"),

        // MARK: - tests
        .executableTarget(
            name: "StoreCrashWriter", dependencies: ["Store", "DataModel", "StoreCrashWorkload"],
            path: "Tests/StoreCrashWriter"),
        .target(name: "TestSupport", dependencies: ["Primitives"], path: "Tests/TestSupport"),
        .target(name: "StoreCrashWorkload", dependencies: ["Store", "DataModel"], path: "Tests/StoreCrashWorkload"),
        .testTarget(name: "PrimitivesTests", dependencies: ["Primitives", "TestSupport"]),
        .testTarget(name: "TransportTests", dependencies: ["Transport", "TestSupport"]),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTP1", "TestSupport"]),
        .testTarget(name: "WebSocketTests", dependencies: ["WebSocket", "WebSocketDeflate", "HTTP1", "TestSupport"]),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "TestSupport"]),
        .testTarget(
            name: "DataModelTests",
            dependencies: [
                "DataModel", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "Store", "DataModel", "Primitives", "TestSupport", "StoreCrashWorkload",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(name: "WireTests", dependencies: ["Wire", "DataModel", "TestSupport"]),
        .testTarget(name: "ClusterTests", dependencies: ["Cluster"]),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "Gateway", "Authorization", "Rules", "Store", "DataModel", "Wire", "HTTP1", "Primitives", "TestSupport",
                "Auth", "Transport", "HTTPServer",
                "WebSocket", .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ControlPlaneTests",
            dependencies: [
                "ControlPlane", "Gateway", "HTTPServer", "HTTP1", "Auth",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "AuthTests",
            dependencies: ["Auth", "DataModel", "TestSupport", .product(name: "JWTKit", package: "jwt-kit")]),
        .testTarget(
            name: "RulesTests", dependencies: ["Rules", "Authorization", "DataModel", "TestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "CanopyDatabaseTests",
            dependencies: [
                "CanopyDatabase", "Gateway", "HTTPServer", "Auth", "Wire", "DataModel", "Transport", "TestSupport",
                "WebSocket", .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "LoadTesterTests",
            dependencies: [
                "LoadTester", "Gateway", "HTTPServer", "Auth", "Transport",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "SettingsTests",
            dependencies: [
                "Settings", "Gateway", "HTTPServer", "HTTP1", "Transport", "Auth",
                .product(name: "Logging", package: "swift-log"),
            ]),
        .testTarget(
            name: "ServerIntegrationTests",
            dependencies: [
                "HTTPServer", "Transport", "TLS", "HTTP1", "WebSocket", "WebSocketDeflate", "Primitives", "TestSupport",
            ]),
    ]
)

/// The modules on the fan-out path, whose mutable state each belongs to one serial queue (a connection's event loop,
/// a namespace's sequencer) and is never reached re-entrantly while being modified: release builds skip the runtime
/// exclusivity checks there, which cost 12% of the server's CPU per delivery (docs/benchmarks.md, issue 14). Debug
/// builds, and so every test run, keep them.
let uncheckedExclusivityTargets: Set<String> = ["Primitives", "Transport", "WebSocket", "HTTPServer", "Gateway"]

for target in package.targets where target.type != .system && target.type != .plugin {
    var settings = (target.swiftSettings ?? []) + sharedSwiftSettings
    if uncheckedExclusivityTargets.contains(target.name) {
        settings.append(.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release)))
    }
    target.swiftSettings = settings
}
