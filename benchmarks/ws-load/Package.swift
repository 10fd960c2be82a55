// swift-tools-version:6.2
import PackageDescription

/// A dependency-free WebSocket load generator (Glibc and the standard library only) for Canopy's transport benchmarks.
let package = Package(
    name: "ws-load",
    products: [
        .executable(name: "ws-load", targets: ["WSLoad"]),
    ],
    targets: [
        .systemLibrary(name: "CEpoll"),
        .executableTarget(
            name: "WSLoad",
            dependencies: ["CEpoll"],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
        .testTarget(
            name: "WSLoadTests",
            dependencies: ["WSLoad"],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]),
    ]
)
