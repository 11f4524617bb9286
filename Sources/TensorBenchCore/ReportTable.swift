import TensorEngine
import TensorEngineChecks

/// The main results table: one line per row, skipped rows included with their reason.
public enum ReportTable {
    /// Whether a workload is judged by bandwidth (GB/s) rather than arithmetic (GFLOP/s).
    public static func isBandwidthBound(_ workload: String) -> Bool {
        guard let descriptor = Workload.named(workload) else { return false }
        switch descriptor.reference {
        case .triad: return true
        case .sgemm, .sgemv, .none: return false
        }
    }

    /// Backends in display order; unknown names (peers) sort after these, by name.
    static let backendOrder = BenchOptions.backendNames + ["numpy", "torch"]

    private enum Line {
        case measured(BenchRow)
        case skipped(SkippedRow)

        var backend: String {
            switch self {
            case .measured(let row): row.backend
            case .skipped(let row): row.backend
            }
        }
    }

    /// The table for a report.
    public static func rendered(_ report: BenchReport) -> String {
        var workloads: [String] = []
        for name in report.rows.map(\.workload) + report.skipped.map(\.workload) where !workloads.contains(name) {
            workloads.append(name)
        }
        let showEstimate = report.rows.contains { $0.estimatedSeconds != nil }
        var columns: [TextTable.Column] = [
            .init("workload"), .init("backend", alignment: .left), .init("first run"), .init("min"), .init("median"),
            .init("p90"), .init("p99"), .init("iters"), .init("throughput"), .init("×ref"),
        ]
        if showEstimate { columns.append(.init("planner est.")) }
        columns += [.init("peak live / total interm."), .init("peak RSS")]
        var table = TextTable(columns: columns)
        for workload in workloads {
            let lines = report.rows.filter { $0.workload == workload }.map(Line.measured)
                + report.skipped.filter { $0.workload == workload }.map(Line.skipped)
            for line in lines.sorted(by: { rank($0.backend) < rank($1.backend) }) {
                switch line {
                case .measured(let row):
                    var cells = [
                        workload, row.kind == .reference ? "reference (\(row.detail ?? "?"))" : row.backend,
                        Format.seconds(row.firstRunSeconds), Format.seconds(row.minSeconds), Format.seconds(row.medianSeconds),
                        Format.seconds(row.p90Seconds), row.p99Seconds.map(Format.seconds) ?? "", "\(row.iterations)",
                        Format.throughput(row, bandwidthBound: isBandwidthBound(workload)),
                        row.referenceRatio.map(Format.ratio) ?? "",
                    ]
                    if showEstimate { cells.append(row.estimatedSeconds.map(Format.seconds) ?? "") }
                    cells.append(memory(row))
                    cells.append(row.peakResidentBytes.map(Format.bytes) ?? "")
                    table.append(cells)
                case .skipped(let row):
                    table.append([workload, row.backend, "skipped (\(row.reason))"])
                }
            }
        }
        return table.rendered()
    }

    private static func rank(_ backend: String) -> Int {
        backendOrder.firstIndex(of: backend) ?? backendOrder.count
    }

    private static func memory(_ row: BenchRow) -> String {
        guard let peak = row.peakLiveBytes, let total = row.totalIntermediateBytes else { return "" }
        return "\(Format.bytes(peak)) / \(Format.bytes(total))"
    }
}
