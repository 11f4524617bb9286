import Foundation

/// One run of `tensorbench` (or of `bench/peers.py`): where it ran, with what, and its rows.
///
/// This is the JSON schema documented in `bench/README.md`. Keys are snake_case and spelled out
/// in the `CodingKeys`, so the Python peers script writes exactly what this type reads.
public struct BenchReport: Sendable, Hashable, Codable {
    /// The schema's version; readers refuse a newer one.
    public var schemaVersion: Int
    /// What wrote the file: `tensorbench` or `peers.py`.
    public var tool: String
    /// When the run started, ISO 8601 in UTC.
    public var created: String
    /// The suite run (`quick`, `full`, or `custom` when filtered).
    public var suite: String
    /// The per-row time budget in seconds.
    public var budgetSeconds: Double
    /// The machine the run measured.
    public var machine: MachineDescription
    /// Versions of what was measured: `swift`, `openblas` (its `openblas_get_config()` string),
    /// and for peers `python`, `numpy`, `torch`.
    public var versions: [String: String]
    /// The backends known to the tool, available or not.
    public var backends: [ReportedBackend]
    /// The measured rows, in run order.
    public var rows: [BenchRow]
    /// Rows not measured, and why.
    public var skipped: [SkippedRow]

    /// The schema version this build writes and reads.
    public static let currentSchemaVersion = 1

    /// Creates a report.
    public init(
        tool: String, created: String, suite: String, budgetSeconds: Double, machine: MachineDescription,
        versions: [String: String], backends: [ReportedBackend], rows: [BenchRow], skipped: [SkippedRow]
    ) {
        self.schemaVersion = Self.currentSchemaVersion
        self.tool = tool
        self.created = created
        self.suite = suite
        self.budgetSeconds = budgetSeconds
        self.machine = machine
        self.versions = versions
        self.backends = backends
        self.rows = rows
        self.skipped = skipped
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version", tool, created, suite, budgetSeconds = "budget_seconds"
        case machine, versions, backends, rows, skipped
    }

    /// The row for a workload and backend, if any.
    public func row(workload: String, backend: String) -> BenchRow? {
        rows.first { $0.workload == workload && $0.backend == backend }
    }
}

/// The machine a report was measured on.
public struct MachineDescription: Sendable, Hashable, Codable {
    /// The CPU's model name (`/proc/cpuinfo`'s `model name`).
    public var cpuModel: String
    /// Cores the process may use.
    public var cores: Int
    /// Physical memory in bytes.
    public var memoryBytes: Int
    /// The operating system, in words.
    public var operatingSystem: String
    /// How many times one core's arithmetic rate all the cores gave together, measured as the run
    /// started and as it ended (`nil`: not measured, as in a peers report). Near the core count,
    /// every core was the process's; toward 1, a shared machine's other tenants held cores, and the
    /// rows that split their work across cores ran slower meanwhile.
    public var parallelScaling: [Double]?

    /// Creates a description.
    public init(
        cpuModel: String, cores: Int, memoryBytes: Int, operatingSystem: String, parallelScaling: [Double]? = nil
    ) {
        self.cpuModel = cpuModel
        self.cores = cores
        self.memoryBytes = memoryBytes
        self.operatingSystem = operatingSystem
        self.parallelScaling = parallelScaling
    }

    enum CodingKeys: String, CodingKey {
        case cpuModel = "cpu_model", cores, memoryBytes = "memory_bytes", operatingSystem = "os"
        case parallelScaling = "parallel_scaling"
    }
}

/// A backend the tool knows, and whether it could run.
public struct ReportedBackend: Sendable, Hashable, Codable {
    /// The backend's name (`naive`, `openblas`, `opencl`, `numpy`, `torch`).
    public var name: String
    /// Whether it ran here.
    public var available: Bool
    /// The device it runs on, or why it is unavailable.
    public var detail: String

    /// Creates a status.
    public init(name: String, available: Bool, detail: String) {
        self.name = name
        self.available = available
        self.detail = detail
    }
}

/// What kind of thing a row measured.
public enum RowKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The engine on one backend, or `auto` (the planner's choice).
    case engine
    /// A bare library call or loop that shows the machine's ceiling for the workload.
    case reference
    /// Another framework (NumPy, PyTorch) running the same workload.
    case peer
}

/// One measured row: a workload on one backend.
public struct BenchRow: Sendable, Hashable, Codable {
    /// The workload's name (`gemm-256`, `bert-layer`, ...).
    public var workload: String
    /// `naive`, `openblas`, `opencl`, `auto`, `reference`, `numpy` or `torch`.
    public var backend: String
    /// What the row measured.
    public var kind: RowKind
    /// For reference rows, what ran (`cblas_sgemm`, `cblas_sgemv`, `triad`).
    public var detail: String?
    /// Measured iterations (the first run and warm-up runs not included).
    public var iterations: Int
    /// The first run's time: planning, kernel compilation and cold caches included.
    public var firstRunSeconds: Double
    /// The fastest measured iteration.
    public var minSeconds: Double
    /// The median measured iteration.
    public var medianSeconds: Double
    /// The 90th percentile of the measured iterations.
    public var p90Seconds: Double
    /// The 99th percentile, when there were at least 100 iterations.
    public var p99Seconds: Double?
    /// Arithmetic throughput at the median, from the workload's FLOP count (absent when it has none).
    public var gflopsPerSecond: Double?
    /// Memory throughput at the median, from the workload's essential bytes.
    public var gigabytesPerSecond: Double?
    /// The median over the same run's reference row's median: 2 means twice the reference's time.
    public var referenceRatio: Double?
    /// For `auto` rows, the planner's estimate of the plan's time.
    public var estimatedSeconds: Double?
    /// The executor's most bytes of intermediate buffers alive at once.
    public var peakLiveBytes: Int?
    /// The bytes of all intermediate buffers the executor created (no reuse would need this much).
    public var totalIntermediateBytes: Int?
    /// The process's peak resident size after the row, in bytes.
    public var peakResidentBytes: Int?

    /// Creates a row from its statistics.
    public init(workload: String, backend: String, kind: RowKind, detail: String? = nil, firstRunSeconds: Double, statistics: SampleStatistics) {
        self.workload = workload
        self.backend = backend
        self.kind = kind
        self.detail = detail
        self.iterations = statistics.count
        self.firstRunSeconds = firstRunSeconds
        self.minSeconds = statistics.min
        self.medianSeconds = statistics.median
        self.p90Seconds = statistics.p90
        self.p99Seconds = statistics.p99
    }

    enum CodingKeys: String, CodingKey {
        case workload, backend, kind, detail, iterations
        case firstRunSeconds = "first_run_seconds", minSeconds = "min_seconds", medianSeconds = "median_seconds"
        case p90Seconds = "p90_seconds", p99Seconds = "p99_seconds", gflopsPerSecond = "gflops_per_second"
        case gigabytesPerSecond = "gigabytes_per_second", referenceRatio = "reference_ratio"
        case estimatedSeconds = "estimated_seconds", peakLiveBytes = "peak_live_bytes"
        case totalIntermediateBytes = "total_intermediate_bytes", peakResidentBytes = "peak_resident_bytes"
    }

    /// Fills the throughput columns from the work the row did.
    public mutating func setThroughput(flops: Double, bytes: Int) {
        guard medianSeconds > 0 else { return }
        gflopsPerSecond = flops > 0 ? flops / medianSeconds / 1e9 : nil
        gigabytesPerSecond = bytes > 0 ? Double(bytes) / medianSeconds / 1e9 : nil
    }
}

/// A row that was not measured.
public struct SkippedRow: Sendable, Hashable, Codable {
    /// The workload's name.
    public var workload: String
    /// The backend's name.
    public var backend: String
    /// Why, in a word or two: `too slow`, `failed`, `unsupported`.
    public var reason: String
    /// The particulars: the estimated time, or the error's message.
    public var detail: String?

    /// Creates a skipped row.
    public init(workload: String, backend: String, reason: String, detail: String? = nil) {
        self.workload = workload
        self.backend = backend
        self.reason = reason
        self.detail = detail
    }
}

/// Why a report file could not be read.
public struct ReportError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in words.
    public let description: String
}

extension BenchReport {
    /// The report as pretty-printed JSON with sorted keys (stable diffs).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// Reads a report, refusing newer schema versions with a clear message.
    public static func decode(_ data: Data, source: String) throws(ReportError) -> BenchReport {
        let report: BenchReport
        do {
            report = try JSONDecoder().decode(BenchReport.self, from: data)
        } catch {
            throw ReportError(description: "\(source) is not a tensorbench report: \(describe(error))")
        }
        guard report.schemaVersion <= currentSchemaVersion else {
            throw ReportError(description: "\(source) has schema version \(report.schemaVersion); this tensorbench reads up to \(currentSchemaVersion)")
        }
        return report
    }

    /// Reads a report from a file.
    public static func load(path: String) throws(ReportError) -> BenchReport {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReportError(description: "cannot read \(path)")
        }
        return try decode(data, source: path)
    }

    private static func describe(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        switch decoding {
        case .keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context))"
        @unknown default:
            return "\(decoding)"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return keys.isEmpty ? "the top level" : keys
    }
}
