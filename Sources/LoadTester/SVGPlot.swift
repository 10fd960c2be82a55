import Glibc

/// The report as an SVG a person can open (`--plot FILE.svg`): deliveries per second and p50/p99 latency over
/// time, and the latency distribution (HdrHistogram's percentile plot, on a 1 / (1 − p) axis).
public enum SVGPlot {
    static let width = 900.0
    static let panelHeight = 240.0
    static let margin = (left: 80.0, right: 30.0, top: 40.0, bottom: 50.0)

    /// The whole document: for the `connections` scenario the connections ready and the server's memory over the
    /// connect phase, for the others the workload's throughput, latency per second and latency distribution.
    public static func render(_ report: BenchReport) -> String {
        let panels = report.scenario == .connections ? connectPanels(report) : workloadPanels(report)
        let height = Double(panels.count) * (panelHeight + margin.top + margin.bottom) + 40
        var svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" "#
            + #"font-family="sans-serif" font-size="12">"# + "\n"
        svg += #"<rect width="100%" height="100%" fill="white"/>"# + "\n"
        svg += text(x: margin.left, y: 24, escape(title(report)), size: 15, anchor: "start", weight: "bold")
        for (index, content) in panels.enumerated() {
            svg += panel(top: 40 + Double(index) * (panelHeight + margin.top + margin.bottom), content)
        }
        return svg + "</svg>\n"
    }

    /// What one panel shows.
    struct Panel {
        var title: String
        var xLabel: String
        var yLabel: String
        var series: [Series]
        var xTicks: Ticks
        var yTicks: Ticks = SVGPlot.linearTicks
        /// Whether the x axis starts at 0 rather than at the first point.
        var xFromZero = true
    }

    private static func workloadPanels(_ report: BenchReport) -> [Panel] {
        let timeline = report.timeline
        let seconds = timeline.map { Double($0.second) + $0.seconds / 2 }
        let rates = [
            Series(
                name: "deliveries/s", color: "#1f77b4",
                points: Array(zip(seconds, timeline.map { Double($0.deliveries) / $0.seconds }))),
            Series(
                name: "write acks/s", color: "#ff7f0e",
                points: Array(zip(seconds, timeline.map { Double($0.acks) / $0.seconds }))),
        ].filter { series in series.points.contains { $0.1 > 0 } }
        let latency = [
            Series(name: "p99", color: "#d62728", points: Array(zip(seconds, timeline.map { $0.p99 / 1000 }))),
            Series(name: "p50", color: "#2ca02c", points: Array(zip(seconds, timeline.map { $0.p50 / 1000 }))),
        ].map { Series(name: $0.name, color: $0.color, points: $0.points.filter { $0.1 > 0 }) }
        let distribution = report.distribution.filter { $0.percentile < 100 }.map {
            (-log10Safe(1 - $0.percentile / 100), $0.microseconds / 1000)
        }
        return [
            Panel(
                title: report.scenario == .echo ? "round trips per second" : "deliveries per second",
                xLabel: "seconds into the workload", yLabel: "per second", series: rates, xTicks: linearTicks),
            Panel(
                title: "latency per second", xLabel: "seconds into the workload", yLabel: "milliseconds",
                series: latency, xTicks: linearTicks),
            Panel(
                title: "latency distribution (whole run)", xLabel: "percentile", yLabel: "milliseconds",
                series: [Series(name: "latency", color: "#9467bd", points: distribution)],
                xTicks: { _, _ in percentileTicks }),
        ]
    }

    private static func connectPanels(_ report: BenchReport) -> [Panel] {
        let points = report.connectTimeline
        var panels = [
            Panel(
                title: "connections ready", xLabel: "seconds since the first connect", yLabel: "connections",
                series: [
                    Series(name: "ready", color: "#1f77b4", points: points.map { ($0.seconds, Double($0.opened)) }),
                    Series(name: "failed", color: "#d62728", points: points.map { ($0.seconds, Double($0.failed)) }),
                ].filter { series in series.points.contains { $0.1 > 0 } }, xTicks: linearTicks)
        ]
        let memory = points.compactMap { point in
            point.serverResidentBytes.map { (point.seconds, Double($0) / 1_048_576) }
        }
        if !memory.isEmpty {
            panels.append(
                Panel(
                    title: "server resident memory", xLabel: "seconds since the first connect", yLabel: "MiB",
                    series: [Series(name: "RSS", color: "#9467bd", points: memory)], xTicks: linearTicks))
        }
        return panels
    }

    struct Series {
        var name: String
        var color: String
        var points: [(Double, Double)]
    }

    /// (position, label) pairs for an axis spanning the given range.
    typealias Ticks = (Double, Double) -> [(Double, String)]

    private static func panel(top: Double, _ content: Panel) -> String {
        let (title, xLabel, yLabel, series) = (content.title, content.xLabel, content.yLabel, content.series)
        let left = margin.left
        let right = width - margin.right
        let plotTop = top + margin.top
        let bottom = plotTop + panelHeight
        let all = series.flatMap(\.points)
        let xMin = content.xFromZero ? min(0, all.map(\.0).min() ?? 0) : (all.map(\.0).min() ?? 0)
        let xMax = max(all.map(\.0).max() ?? 1, xMin + 1)
        let yMax = max(all.map(\.1).max() ?? 1, 1e-9) * 1.1
        func x(_ value: Double) -> Double { left + (value - xMin) / (xMax - xMin) * (right - left) }
        func y(_ value: Double) -> Double { bottom - value / yMax * panelHeight }
        var svg = text(x: left, y: top + 28, escape(title), size: 13, anchor: "start", weight: "bold")
        svg += #"<rect x="\#(f(left))" y="\#(f(plotTop))" width="\#(f(right - left))" height="\#(f(panelHeight))" "#
            + ##"fill="none" stroke="#888"/>"## + "\n"
        for (value, label) in content.xTicks(xMin, xMax) where value >= xMin && value <= xMax {
            svg += line(x(value), bottom, x(value), bottom + 5, "#888")
            svg += text(x: x(value), y: bottom + 18, label, size: 11, anchor: "middle")
        }
        for (value, label) in content.yTicks(0, yMax) where value <= yMax {
            svg += line(left - 5, y(value), right, y(value), "#eee")
            svg += text(x: left - 8, y: y(value) + 4, label, size: 11, anchor: "end")
        }
        svg += text(x: (left + right) / 2, y: bottom + 38, escape(xLabel), size: 12, anchor: "middle")
        svg += #"<text x="18" y="\#(f((plotTop + bottom) / 2))" font-size="12" text-anchor="middle" "#
            + #"transform="rotate(-90 18 \#(f((plotTop + bottom) / 2)))">\#(escape(yLabel))</text>"# + "\n"
        if all.isEmpty {
            return svg + text(x: (left + right) / 2, y: (plotTop + bottom) / 2, "no data", size: 12, anchor: "middle")
        }
        for (position, entry) in series.enumerated() where !entry.points.isEmpty {
            let path = entry.points.map { "\(f(x($0.0))),\(f(y($0.1)))" }.joined(separator: " ")
            svg += #"<polyline points="\#(path)" fill="none" stroke="\#(entry.color)" stroke-width="2"/>"# + "\n"
            if entry.points.count <= 60 {
                for point in entry.points {
                    svg += #"<circle cx="\#(f(x(point.0)))" cy="\#(f(y(point.1)))" r="2.5" fill="\#(entry.color)"/>"#
                        + "\n"
                }
            }
            let legendY = plotTop + 16 + Double(position) * 16
            svg += line(right - 120, legendY - 4, right - 100, legendY - 4, entry.color, width: 3)
            svg += text(x: right - 95, y: legendY, escape(entry.name), size: 11, anchor: "start")
        }
        return svg
    }

    /// Percentile axis positions: −log10(1 − p).
    private static let percentileTicks: [(Double, String)] = [
        (0, "0%"), (1, "90%"), (2, "99%"), (3, "99.9%"), (4, "99.99%"), (5, "99.999%"),
    ]

    /// About five round ticks between `low` and `high`.
    private static func linearTicks(_ low: Double, _ high: Double) -> [(Double, String)] {
        let span = max(high - low, 1e-9)
        var step = 1.0
        while span / step > 8 { step *= 10 }
        while span / step < 3 { step /= 10 }
        if span / step > 6 { step *= 2 }
        var ticks: [(Double, String)] = []
        var value = (low / step).rounded(.up) * step
        while value <= high + step * 1e-9 {
            ticks.append((value, label(value)))
            value += step
        }
        return ticks
    }

    private static func label(_ value: Double) -> String {
        if value >= 1e6 { return Human.rounded(value / 1e6, places: 2) + "M" }
        if value >= 1e3 { return Human.rounded(value / 1e3, places: 2) + "k" }
        return Human.rounded(value, places: 3)
    }

    private static func title(_ report: BenchReport) -> String {
        var text = "canopy bench \(report.scenario.rawValue) (\(report.wireProtocol.rawValue)), \(report.date): "
        if report.scenario == .connections {
            text += "\(Human.count(report.connections.opened)) ready at "
                + Human.rate(report.connections.acceptsPerSecond)
            if let perConnection = report.server.residentPerConnectionBytes {
                text += ", server RSS \(Human.bytes(perConnection)) per connection"
            }
        } else {
            text += Human.rate(report.deliveriesPerSecond)
        }
        if let latency = report.latency { text += ", p99 \(Human.latency(latency.p99))" }
        return text + (report.ok ? "" : " — FAILED")
    }

    private static func log10Safe(_ value: Double) -> Double {
        value > 0 ? log10(value) : -6
    }

    private static func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, _ color: String, width: Double = 1)
        -> String
    {
        #"<line x1="\#(f(x1))" y1="\#(f(y1))" x2="\#(f(x2))" y2="\#(f(y2))" stroke="\#(color)" "#
            + #"stroke-width="\#(f(width))"/>"# + "\n"
    }

    private static func text(
        x: Double, y: Double, _ content: String, size: Int, anchor: String, weight: String = "normal"
    ) -> String {
        #"<text x="\#(f(x))" y="\#(f(y))" font-size="\#(size)" text-anchor="\#(anchor)" "#
            + #"font-weight="\#(weight)">\#(content)</text>"# + "\n"
    }

    private static func f(_ value: Double) -> String {
        format((value * 10).rounded() / 10)
    }

    /// Text safe inside SVG (XML) content and attributes.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
