import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

import Glibc

// A SwiftNIO WebSocket server with the same two benchmark endpoints as Canopy:
//   GET /echo       echoes every message back to its sender;
//   GET /broadcast  sends every message received on any /broadcast connection to all of them, sender included.
// Usage: nio-broadcast [--host 127.0.0.1] [--port 0] [--threads N] [--per-connection-encoding]

let options: ServerOptions
do {
    options = try ServerOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("nio-broadcast: \(error)\n\(ServerOptions.usage)\n")
    exit(2)
}

signal(SIGPIPE, SIG_IGN)
let openFileLimit = raiseOpenFileLimit()

let group = MultiThreadedEventLoopGroup(numberOfThreads: options.threads)
let hub = BroadcastHub(group: group, encoding: options.encoding)
let echoPath = "/echo"
let broadcastPath = "/broadcast"

let bootstrap = ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
            let upgrader = NIOTypedWebSocketServerUpgrader<Void>(
                shouldUpgrade: { channel, head in
                    let path = requestPath(head.uri)
                    let accepted = path == echoPath || path == broadcastPath
                    return channel.eventLoop.makeSucceededFuture(accepted ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, head in
                    channel.eventLoop.makeCompletedFuture {
                        if requestPath(head.uri) == echoPath {
                            try channel.pipeline.syncOperations.addHandler(EchoHandler())
                        } else {
                            try channel.pipeline.syncOperations.addHandler(BroadcastHandler(hub: hub))
                        }
                    }
                })
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Void>(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NotFoundHandler())
                    }
                })
            _ = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: .init(upgradeConfiguration: upgrade))
        }
    }

do {
    let server = try bootstrap.bind(host: options.host, port: options.port).wait()
    let port = server.localAddress?.port ?? options.port
    writeLine(
        "nio-broadcast: \(options.threads) event loops, open-file limit \(openFileLimit), "
            + "broadcast encoding \(options.encoding)",
        to: STDOUT_FILENO)
    writeLine("listening on \(options.host):\(port)", to: STDOUT_FILENO)
    try server.closeFuture.wait()
} catch {
    printError("nio-broadcast: \(error)\n")
    exit(1)
}

/// The path part of a request target, without the query string.
func requestPath(_ uri: String) -> Substring {
    uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
}

/// Raises the soft open-file limit to the hard limit so that thousands of connections fit; returns the new limit.
func raiseOpenFileLimit() -> Int {
    // Computed here, not as a global: globals in main.swift are set in order, after this function first runs.
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { return -1 }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
    guard getrlimit(resource, &limit) == 0 else { return -1 }
    return Int(clamping: limit.rlim_cur)
}

/// Writes a diagnostic line to standard error.
func printError(_ text: String) {
    writeLine(text, to: STDERR_FILENO)
}

/// Writes `text` and a newline to `descriptor` at once, unbuffered, so that a script reading a pipe sees it now.
func writeLine(_ text: String, to descriptor: Int32) {
    let line = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
    var offset = 0
    while offset < line.count {
        let written = line[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        if written <= 0 { return }
        offset += written
    }
}
