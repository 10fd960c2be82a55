import HTTPServer
import Transport

/// The HTTP server's own counters, read at scrape time.
struct TransportFigures {
    let liveConnections: Int
    let accepted: UInt64
    let refused: UInt64
    let slowConsumers: UInt64
    let inboundRateCloses: UInt64
    let bytesWritten: UInt64

    init(_ server: HTTPServer) {
        liveConnections = server.liveConnections
        accepted = server.metrics.accepted.load
        refused = server.refusedConnections
        slowConsumers = server.metrics.slowConsumers.load
        inboundRateCloses = server.metrics.inboundRateCloses.load
        bytesWritten = server.eventLoops.loops.reduce(0) { $0 + $1.bytesWritten.load }
    }

    /// Prometheus text lines for these figures.
    var exposition: [UInt8] {
        var text = ""
        func add(_ name: String, _ type: String, _ value: String) {
            text += "# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        add("canopy_connections", "gauge", "\(liveConnections)")
        add("canopy_connections_accepted_total", "counter", "\(accepted)")
        add("canopy_connections_refused_total", "counter", "\(refused)")
        add("canopy_slow_consumers_dropped_total", "counter", "\(slowConsumers)")
        add("canopy_limit_inbound_rate_closed_total", "counter", "\(inboundRateCloses)")
        add("canopy_bytes_written_total", "counter", "\(bytesWritten)")
        return Array(text.utf8)
    }
}
