import Foundation

/// A horizontal bar chart of median latency per workload and backend, on a log scale, as a
/// self-contained SVG document (no scripts, no external fonts or styles).
///
/// Each workload is a group of bars, one per row, coloured by backend; reference rows are drawn
/// hatched with a dashed outline and labelled `(ref)`, so the ceiling stands apart.
public struct SVGChart: Sendable {
    /// The rows to draw (rows whose median is not positive are left out).
    public let rows: [BenchRow]
    /// The chart's title.
    public let title: String

    /// Layout constants, in SVG user units (pixels at 100 % zoom).
    enum Layout {
        static let width = 1000.0
        static let labelWidth = 250.0
        static let rightMargin = 90.0
        static let top = 70.0
        static let barHeight = 12.0
        static let barGap = 2.0
        static let groupGap = 10.0
        static let axisHeight = 40.0
        static let legendHeight = 30.0
    }

    /// The fill colours backends are drawn in, in order of first appearance.
    static let palette = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f"]

    /// Creates a chart.
    public init(rows: [BenchRow], title: String) {
        self.rows = rows.filter { $0.medianSeconds > 0 && $0.medianSeconds.isFinite }
        self.title = title
    }

    /// The backends in order of first appearance, reference last.
    var backends: [String] {
        var seen: [String] = []
        for row in rows where !seen.contains(row.backend) { seen.append(row.backend) }
        return seen.filter { $0 != "reference" } + (seen.contains("reference") ? ["reference"] : [])
    }

    /// The workloads in order of first appearance.
    var workloads: [String] {
        var seen: [String] = []
        for row in rows where !seen.contains(row.workload) { seen.append(row.workload) }
        return seen
    }

    /// The decades the axis spans: from the fastest median's decade to the slowest's.
    var decades: ClosedRange<Int> {
        let medians = rows.map(\.medianSeconds)
        let low = Int(log10(medians.min() ?? 1e-6).rounded(.down))
        let high = Int(log10(medians.max() ?? 1).rounded(.up))
        return low...Swift.max(high, low + 1)
    }

    /// The SVG document.
    public func rendered() -> String {
        let plotLeft = Layout.labelWidth
        let plotWidth = Layout.width - Layout.labelWidth - Layout.rightMargin
        let span = decades
        func x(_ seconds: Double) -> Double {
            plotLeft + (log10(seconds) - Double(span.lowerBound)) / Double(span.upperBound - span.lowerBound) * plotWidth
        }
        let colours = Dictionary(uniqueKeysWithValues: backends.enumerated().map { ($0.element, Self.palette[$0.offset % Self.palette.count]) })

        var body: [String] = []
        var y = Layout.top
        for workload in workloads {
            let group = rows.filter { $0.workload == workload }.sorted { backendOrder($0) < backendOrder($1) }
            let groupHeight = Double(group.count) * (Layout.barHeight + Layout.barGap)
            body.append(text(workload, x: 10, y: y + groupHeight / 2 + 4, anchor: "start", weight: "bold"))
            for row in group {
                let isReference = row.kind == .reference
                let end = x(row.medianSeconds)
                let width = Swift.max(1, end - plotLeft)
                let fill = isReference ? "url(#hatch)" : colours[row.backend] ?? "#999999"
                let stroke = isReference ? " stroke=\"#333333\" stroke-dasharray=\"3,2\"" : ""
                let label = isReference ? "\(row.detail ?? "reference") (ref)" : row.backend
                body.append("<rect x=\"\(f(plotLeft))\" y=\"\(f(y))\" width=\"\(f(width))\" height=\"\(f(Layout.barHeight))\" fill=\"\(fill)\"\(stroke)><title>\(escape("\(workload) · \(label): median \(Format.seconds(row.medianSeconds))"))</title></rect>")
                body.append(text(label, x: plotLeft - 6, y: y + Layout.barHeight - 2, anchor: "end", size: 9, colour: "#555555"))
                body.append(text(Format.seconds(row.medianSeconds), x: plotLeft + width + 4, y: y + Layout.barHeight - 2, anchor: "start", size: 9))
                y += Layout.barHeight + Layout.barGap
            }
            y += Layout.groupGap
        }
        let plotBottom = y
        var axis: [String] = []
        for decade in span {
            let position = x(pow(10, Double(decade)))
            axis.append("<line x1=\"\(f(position))\" y1=\"\(f(Layout.top - 5))\" x2=\"\(f(position))\" y2=\"\(f(plotBottom))\" stroke=\"#dddddd\"/>")
            axis.append(text(Format.seconds(pow(10, Double(decade))), x: position, y: plotBottom + 15, anchor: "middle", size: 10))
        }
        axis.append(text("median latency per run (log scale; shorter is faster)", x: plotLeft + plotWidth / 2, y: plotBottom + 32, anchor: "middle", size: 11))

        var legend: [String] = []
        var legendX = plotLeft
        for backend in backends {
            let fill = backend == "reference" ? "url(#hatch)" : colours[backend] ?? "#999999"
            legend.append("<rect x=\"\(f(legendX))\" y=\"40\" width=\"12\" height=\"12\" fill=\"\(fill)\" stroke=\"#333333\" stroke-width=\"0.5\"/>")
            legend.append(text(backend == "reference" ? "reference (bare BLAS / triad)" : backend, x: legendX + 16, y: 50, anchor: "start", size: 11))
            legendX += backend == "reference" ? 200 : 90
        }

        let height = plotBottom + Layout.axisHeight + 10
        let defs = """
            <defs><pattern id="hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">\
            <rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#555555" stroke-width="2"/></pattern></defs>
            """
        let lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(Layout.width))\" height=\"\(f(height))\" viewBox=\"0 0 \(f(Layout.width)) \(f(height))\" font-family=\"sans-serif\">",
            defs,
            "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>",
            text(title, x: Layout.width / 2, y: 24, anchor: "middle", size: 15, weight: "bold"),
        ] + legend + axis + body + ["</svg>"]
        return lines.joined(separator: "\n") + "\n"
    }

    private func backendOrder(_ row: BenchRow) -> Int { backends.firstIndex(of: row.backend) ?? backends.count }

    private func text(
        _ content: String, x: Double, y: Double, anchor: String, size: Double = 12, weight: String = "normal",
        colour: String = "#222222"
    ) -> String {
        "<text x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\" font-size=\"\(f(size))\" font-weight=\"\(weight)\" fill=\"\(colour)\">\(escape(content))</text>"
    }

    private func f(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Escapes the five XML special characters.
    static func escapeXML(_ string: String) -> String {
        var result = ""
        for character in string {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    private func escape(_ string: String) -> String { Self.escapeXML(string) }
}
