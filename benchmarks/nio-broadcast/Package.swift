// swift-tools-version:6.2
import PackageDescription

/// A SwiftNIO WebSocket server used only as a benchmark baseline for Canopy's transport.
///
/// It lives in its own package under `benchmarks/` so that Canopy itself never depends on SwiftNIO.
let package = Package(
    name: "nio-broadcast",
    products: [
        .executable(name: "nio-broadcast", targets: ["NIOBroadcastServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "NIOBroadcastServer",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
    ]
)
