import Foundation
import TensorEngine
import TensorEngineChecks

/// The suites `tensorbench` knows.
public enum Suite: String, Sendable, Hashable, CaseIterable {
    /// The workloads marked quick: the whole suite runs in under a minute on two cores.
    case quick
    /// Every workload.
    case full

    /// The default time budget per row, in seconds.
    public var defaultBudgetSeconds: Double {
        switch self {
        case .quick: 0.25
        case .full: 1.0
        }
    }

    /// The default `--naive-limit`: naive rows estimated (at the naive profile's 0.3 GFLOP/s or
    /// GB/s) to take longer per run are skipped. The naive loops run 2–4× slower than that
    /// estimate on big products, so the quick suite keeps only the rows that cost well under a
    /// second, which keeps it under a minute on two cores.
    public var defaultNaiveLimitSeconds: Double {
        switch self {
        case .quick: 0.5
        case .full: 3.0
        }
    }
}

/// Everything one `tensorbench` invocation was asked to do.
public struct BenchOptions: Sendable, Hashable {
    /// The suite; `--workload` narrows it (and may name workloads outside it).
    public var suite: Suite = .quick
    /// Workloads named with `--workload`, in order (empty: the whole suite).
    public var workloads: [String] = []
    /// Backends named with `--backend` (empty: every available one, `auto` and `reference`).
    public var backends: [String] = []
    /// Seconds of measured runs per row (`nil`: the suite's default).
    public var budgetSeconds: Double?
    /// The most measured runs per row.
    public var maximumIterations = 10_000
    /// Naive rows whose estimated run time exceeds this many seconds are skipped (`nil`: the
    /// suite's default).
    public var naiveLimitSeconds: Double?
    /// Where to write the JSON report.
    public var jsonPath: String?
    /// Where to write the SVG chart.
    public var svgPath: String?
    /// A report to compare the run with.
    public var comparePath: String?
    /// A report to use instead of measuring (for `--compare` and `--svg` on saved runs).
    public var fromPath: String?

    /// Creates the default options.
    public init() {}

    /// The budget in force.
    public var effectiveBudgetSeconds: Double { budgetSeconds ?? suite.defaultBudgetSeconds }

    /// The naive limit in force.
    public var effectiveNaiveLimitSeconds: Double { naiveLimitSeconds ?? suite.defaultNaiveLimitSeconds }

    /// The suite's name as reports record it: `custom` when filtered.
    public var suiteLabel: String { workloads.isEmpty && backends.isEmpty ? suite.rawValue : "custom" }

    /// Backend names `--backend` accepts: every backend the engine knows (an unavailable one gets
    /// a skipped row), `auto` and `reference`.
    public static let backendNames = BackendStatus.all.map(\.id.name) + ["auto", "reference"]
}

/// What the command line asks for.
public enum BenchCommand: Sendable, Hashable {
    /// Print the help text.
    case help
    /// Print the workloads.
    case list
    /// Measure (or load) and report.
    case run(BenchOptions)
    /// Time the OpenCL backend's matrix-product kernel alone (inputs on the device) at these
    /// sizes, for comparison with a device library's product (`scripts/gpu-check.sh`).
    case openCLMatmul([Int])
}

/// A command line `tensorbench` cannot act on. Its description is the message to print.
public struct ArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in words, with a pointer to `--help`.
    public let description: String

    init(_ message: String) { description = "tensorbench: \(message) (see tensorbench --help)" }

    /// The exit status for a bad command line.
    public static let exitCode: Int32 = 2
}

/// Parses `tensorbench`'s arguments by hand (no argument-parsing package is available here).
public enum ArgumentParser {
    /// Parses the arguments after the program name. `--flag value` and `--flag=value` both work.
    public static func parse(_ arguments: [String]) throws(ArgumentError) -> BenchCommand {
        var options = BenchOptions()
        var list = false
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            var flag = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func value() throws(ArgumentError) -> String {
                if let inline { return inline }
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw ArgumentError("\(flag) needs a value")
                }
                index += 1
                return arguments[index - 1]
            }
            func noValue() throws(ArgumentError) {
                if inline != nil { throw ArgumentError("\(flag) takes no value") }
            }
            switch flag {
            case "-h", "--help":
                try noValue()
                return .help
            case "--list":
                try noValue()
                list = true
            case "--opencl-matmul":
                let text = try value()
                let sizes = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) >= 1 && ($0 ?? 0) <= 16_384 }) else {
                    throw ArgumentError("\(flag) needs sizes from 1 to 16384, separated by commas, not '\(text)'")
                }
                return .openCLMatmul(sizes.compactMap { $0 })
            case "--suite":
                let name = try value()
                guard let suite = Suite(rawValue: name) else {
                    throw ArgumentError("unknown suite '\(name)'; valid: \(Suite.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                options.suite = suite
            case "--workload":
                let name = try value()
                guard Workload.named(name) != nil else {
                    throw ArgumentError("unknown workload '\(name)'; valid: \(Workload.all.map(\.name).joined(separator: ", "))")
                }
                if !options.workloads.contains(name) { options.workloads.append(name) }
            case "--backend":
                let name = try value()
                guard BenchOptions.backendNames.contains(name) else {
                    throw ArgumentError("unknown backend '\(name)'; valid: \(BenchOptions.backendNames.joined(separator: ", "))")
                }
                if !options.backends.contains(name) { options.backends.append(name) }
            case "--budget":
                options.budgetSeconds = try positiveNumber(try value(), flag: flag)
            case "--iterations":
                let text = try value()
                guard let count = Int(text), count >= 1 else { throw ArgumentError("\(flag) needs a whole number ≥ 1, not '\(text)'") }
                options.maximumIterations = count
            case "--naive-limit":
                options.naiveLimitSeconds = try positiveNumber(try value(), flag: flag)
            case "--json": options.jsonPath = try path(try value(), flag: flag)
            case "--svg": options.svgPath = try path(try value(), flag: flag)
            case "--compare": options.comparePath = try path(try value(), flag: flag)
            case "--from": options.fromPath = try path(try value(), flag: flag)
            default:
                throw ArgumentError(argument.hasPrefix("-") ? "unknown flag '\(flag)'" : "unexpected argument '\(argument)'")
            }
        }
        return list ? .list : .run(options)
    }

    private static func positiveNumber(_ text: String, flag: String) throws(ArgumentError) -> Double {
        guard let number = Double(text), number.isFinite, number > 0 else {
            throw ArgumentError("\(flag) needs a positive number of seconds, not '\(text)'")
        }
        return number
    }

    private static func path(_ text: String, flag: String) throws(ArgumentError) -> String {
        guard !text.isEmpty else { throw ArgumentError("\(flag) needs a file path") }
        return text
    }

    /// The `--help` text: every flag, with its default.
    public static let helpText = """
        tensorbench: latency of TensorEngine's workloads on every backend, beside reference rows

        USAGE: tensorbench [--suite quick|full] [--workload NAME]... [--backend NAME]...
                           [--budget SECONDS] [--iterations N] [--naive-limit SECONDS]
                           [--json FILE] [--svg FILE] [--compare OLD.json] [--from FILE]
               tensorbench --opencl-matmul N[,N...]

        Each row builds the workload's graph afresh on inputs materialized once, evaluates it and
        reads the results back: planning + dispatch + compute + read-back, what a user pays. The first run is reported apart; then a
        short warm-up, then runs until the budget or the iteration cap, taken in 8 turns with the
        workload's other rows so that the machine's drift falls on every row alike.

        OPTIONS:
          --suite quick|full      quick: the workloads marked quick (under a minute on 2 cores);
                                  full: every workload (default: quick)
          --workload NAME         run only this workload (repeatable); see --list
          --backend NAME          run only this backend (repeatable): naive, openblas, opencl,
                                  auto (the planner chooses), reference (bare BLAS / memory triad)
          --budget SECONDS        seconds of measured runs per row (default: 0.25 quick, 1 full)
          --iterations N          at most N measured runs per row (default: 10000)
          --naive-limit SECONDS   skip naive rows estimated (at 0.3 GFLOP/s or GB/s) to take
                                  longer than this per run (default: 0.5 quick, 3 full)
          --json FILE             write the report as JSON (schema: bench/README.md)
          --svg FILE              write a bar chart of median latency (log scale) as SVG
          --compare OLD.json      print new/old ratios per row against an earlier report (or a
                                  peers.json from bench/peers.py), marking changes beyond noise
          --from FILE             read a report instead of measuring (with --compare, --svg)
          --list                  list the workloads and exit
          --opencl-matmul N,...   time the OpenCL matrix-product kernel alone on N×N inputs
                                  already on the device, in GFLOP/s, and exit
          -h, --help              show this help and exit

        EXIT STATUS: 0 on success, 1 when a run or a file fails, 2 for a bad command line.
        """
}
