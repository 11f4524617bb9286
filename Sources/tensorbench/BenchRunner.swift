import Foundation
import TensorBenchCore
import TensorEngine

/// Measures the selected workloads on the selected backends and assembles the report.
struct BenchRunner {
    let options: BenchOptions

    /// The naive backend's documented default speed (`DefaultProfiles`): 0.3 GFLOP/s and 0.3 GB/s.
    static let naiveOperationsPerSecond = 0.3e9

    /// One row to measure.
    enum Target: Equatable {
        case engine(BackendKind)
        case auto
        case reference

        var name: String {
            switch self {
            case .engine(let kind): kind.rawValue
            case .auto: "auto"
            case .reference: "reference"
            }
        }
    }

    /// The workloads to run: the named ones, else the suite's.
    var workloads: [Workload] {
        if !options.workloads.isEmpty { return options.workloads.compactMap(Workload.named) }
        switch options.suite {
        case .quick: return Workload.all.filter(\.quick)
        case .full: return Workload.all
        }
    }

    /// The rows per workload, reference first so engine rows can be put against it.
    func targets(for workload: Workload) -> [Target] {
        var targets: [Target] = []
        if BareKernel.hasReference(workload.reference) { targets.append(.reference) }
        // Unavailable backends only get a (skipped) row when asked for by name.
        let available = Self.availableKinds
        targets += BackendKind.allCases.filter { available.contains($0) || options.backends.contains($0.rawValue) }.map(Target.engine)
        targets.append(.auto)
        return targets.filter { options.backends.isEmpty || options.backends.contains($0.name) }
    }

    func run() async -> BenchReport {
        let created = ISO8601DateFormatter().string(from: Date())
        let plan = SamplingPlan(budgetSeconds: options.effectiveBudgetSeconds, maximumIterations: options.maximumIterations)
        let available = Self.availableKinds
        let selected = workloads
        let progress = Progress(total: selected.reduce(0) { $0 + targets(for: $1).count })
        var rows: [BenchRow] = []
        var skipped: [SkippedRow] = []
        var done = 0

        for workload in selected {
            let (prepared, preparationFailure) = await Prepared.make(workload)
            var referenceMedian: Double?
            for target in targets(for: workload) {
                progress.show(done, workload.name, target.name)
                done += 1
                if let preparationFailure, target != .reference {
                    skipped.append(SkippedRow(workload: workload.name, backend: target.name, reason: preparationFailure.reason, detail: preparationFailure.detail))
                    continue
                }
                if case .engine(let kind) = target, !available.contains(kind) {
                    skipped.append(SkippedRow(workload: workload.name, backend: target.name, reason: "unavailable", detail: Self.statuses.first { $0.kind == kind }?.unavailableReason))
                    continue
                }
                if case .engine(.naive) = target {
                    let estimate = max(workload.flops, Double(workload.essentialBytes)) / Self.naiveOperationsPerSecond
                    if estimate > options.effectiveNaiveLimitSeconds {
                        skipped.append(SkippedRow(workload: workload.name, backend: target.name, reason: "too slow",
                                                  detail: String(format: "estimated %.1f s per run at 0.3 GFLOP/s or GB/s; limit %.1f s (--naive-limit)", estimate, options.effectiveNaiveLimitSeconds)))
                        continue
                    }
                }
                do {
                    guard var row = try await measure(workload, target, prepared: prepared, plan: plan) else { continue }
                    row.setThroughput(flops: workload.flops, bytes: workload.essentialBytes)
                    if target == .reference { referenceMedian = row.medianSeconds }
                    if let referenceMedian, referenceMedian > 0 { row.referenceRatio = row.medianSeconds / referenceMedian }
                    row.peakResidentBytes = MachineProbe.peakResidentBytes()
                    rows.append(row)
                } catch {
                    skipped.append(SkippedRow(workload: workload.name, backend: target.name, reason: "failed", detail: "\(error)"))
                }
            }
        }
        progress.finish()
        return BenchReport(
            tool: "tensorbench", created: created, suite: options.suiteLabel, budgetSeconds: plan.budgetSeconds,
            machine: MachineProbe.describe(), versions: MachineProbe.versions(), backends: backendStatuses(), rows: rows, skipped: skipped)
    }

    /// Measures one row; `nil` when the target has nothing to run.
    private func measure(_ workload: Workload, _ target: Target, prepared: Prepared, plan: SamplingPlan) async throws -> BenchRow? {
        let policy: ComputePolicy
        switch target {
        case .reference:
            guard let kernel = BareKernel.make(for: workload.reference) else { return nil }
            let measurement = try await Sampler.measure(plan) { kernel.run() }
            return row(workload, target, measurement, detail: kernel.name)
        case .engine(let kind): policy = .only(kind)
        case .auto: policy = .all
        }
        var statistics: EvaluationStatistics?
        let measurement: Measurement
        switch prepared {
        case .graph(let inputs, let graph):
            measurement = try await Sampler.measure(plan) {
                statistics = try await Tensor.evaluate(graph(inputs), policy: policy)
            }
        case .embedding(let embedder, let sentences):
            measurement = try await Sampler.measure(plan) { _ = try await embedder.embed(sentences, policy: policy) }
        case .unavailable:
            return nil
        }
        guard var row = row(workload, target, measurement, detail: nil) else { return nil }
        row.peakLiveBytes = statistics?.peakLiveBytes
        row.totalIntermediateBytes = statistics?.totalIntermediateBytes
        if target == .auto, let graph = prepared.planningGraph {
            // A fresh graph of the same structure: the estimate of the plan the runs used.
            row.estimatedSeconds = try ComputePlan(for: graph(), policy: .all).totalEstimatedSeconds
        }
        return row
    }

    private func row(_ workload: Workload, _ target: Target, _ measurement: Measurement, detail: String?) -> BenchRow? {
        guard let statistics = SampleStatistics(measurement.samples) else { return nil }
        let kind: RowKind = target == .reference ? .reference : .engine
        return BenchRow(workload: workload.name, backend: target.name, kind: kind, detail: detail,
                        firstRunSeconds: measurement.firstRunSeconds, statistics: statistics)
    }

    /// The engine's backends, available or not (read once: the engine starts them once).
    static let statuses = BackendStatus.all

    /// The kinds of the available backends.
    static var availableKinds: [BackendKind] { statuses.filter(\.isAvailable).map(\.kind) }

    /// The device and whether the planner's profile for it is calibrated (else defaults).
    private static func describe(_ status: BackendStatus) -> String {
        let profile = status.profile.map { $0.calibrated ? "calibrated profile" : "default profile" } ?? "no profile"
        return "\(status.deviceName ?? "unknown device"); \(profile)"
    }

    private func backendStatuses() -> [ReportedBackend] {
        Self.statuses.map { status in
            ReportedBackend(name: status.kind.rawValue, available: status.isAvailable,
                            detail: status.unavailableReason ?? Self.describe(status))
        }
    }
}
