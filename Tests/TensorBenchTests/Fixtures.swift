import Testing
@testable import TensorBenchCore

/// Hand-made rows and reports for the tests.
enum Fixtures {
    /// A row whose min, median and p90 are exactly the given times (three samples).
    static func row(_ workload: String, _ backend: String, kind: RowKind = .engine, min: Double, median: Double, p90: Double) throws -> BenchRow {
        let statistics = try #require(SampleStatistics([p90, min, median]))
        return BenchRow(workload: workload, backend: backend, kind: kind, firstRunSeconds: median * 3, statistics: statistics)
    }

    static func report(_ rows: [BenchRow], tool: String = "tensorbench", skipped: [SkippedRow] = []) -> BenchReport {
        BenchReport(
            tool: tool, created: "2026-01-01T00:00:00Z", suite: "quick", budgetSeconds: 0.25,
            machine: MachineDescription(cpuModel: "Test CPU <x86> & co", cores: 2, memoryBytes: 8 << 30, operatingSystem: "Linux"),
            versions: ["swift": "6.3.1", "openblas": "OpenBLAS 0.3.21 DYNAMIC_ARCH"],
            backends: [ReportedBackend(name: "naive", available: true, detail: "host CPU"), ReportedBackend(name: "opencl", available: false, detail: "not built yet")],
            rows: rows, skipped: skipped)
    }
}
