import Foundation
import TensorBenchCore
import TensorEngine
import TensorEngineChecks

/// The lines printed above the results table.
enum Summary {
    /// Machine, versions, backends and the run's settings.
    static func header(_ report: BenchReport) -> String {
        let machine = report.machine
        let memory = Format.bytes(machine.memoryBytes)
        let backends = report.backends.map { $0.available ? "\($0.name) (\($0.detail))" : "\($0.name): unavailable, \($0.detail)" }
        var lines = [
            "tensorbench \(report.suite) suite · \(report.created)",
            "machine: \(machine.cpuModel), \(machine.cores) cores, \(memory), \(machine.operatingSystem)",
            "versions: " + report.versions.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: " · "),
            "backends: " + backends.joined(separator: "; "),
            "budget: \(report.budgetSeconds) s of measured runs per row; times per run: graph built + planned + run",
        ]
        if let scaling = machine.parallelScaling, let first = scaling.first, let last = scaling.last {
            let times = { (value: Double) in String(format: "%.2f×", value) }
            lines.append(
                "cores: arithmetic on all \(machine.cores) ran \(times(first)) one core's rate as the run started, "
                    + "\(times(last)) as it ended (\(machine.cores).00× when no other tenant holds a core)")
        }
        if !report.skipped.isEmpty {
            lines.append("skipped: \(report.skipped.count) rows (see the table; details in --json)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// The `--list` output: every workload with its suite and summary.
enum WorkloadList {
    static func rendered() -> String {
        var table = TextTable(columns: [.init("workload"), .init("suite", alignment: .left), .init("reference", alignment: .left), .init("what", alignment: .left)])
        for workload in Workload.all {
            let reference = switch workload.reference {
            case .sgemm: "cblas_sgemm"
            case .sgemv: "cblas_sgemv"
            case .triad: "triad"
            case .none: "—"
            }
            table.append([workload.name, workload.quick ? "quick" : "full", reference, workload.summary])
        }
        return table.rendered()
    }
}
