import Foundation
import TensorBenchCore
import TensorEngine
import TensorEngineChecks

/// Measures the selected workloads on the selected backends and assembles the report.
struct BenchRunner {
    let options: BenchOptions

    /// The naive backend's default speed (`NaiveBackend.defaultProfile`): 0.3 GFLOP/s and 0.3 GB/s.
    static let naiveOperationsPerSecond = 0.3e9

    /// One row to measure.
    enum Target: Equatable {
        case engine(BackendID)
        case auto
        case reference

        var name: String {
            switch self {
            case .engine(let id): id.name
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
        targets += Self.statuses.map(\.id).filter { available.contains($0) || options.backends.contains($0.name) }.map(Target.engine)
        targets.append(.auto)
        return targets.filter { options.backends.isEmpty || options.backends.contains($0.name) }
    }

    /// Where a row is measured within an even turn (odd turns reverse it): the OpenCL row at one
    /// end and the naive loops beside it, so the rows that are compared closely (the reference,
    /// openblas and auto, microseconds apart on small workloads) never start right after PoCL's:
    /// a microsecond row measured right after it was up to 30% slower.
    static func measuringRank(_ target: Target) -> Int {
        switch target {
        case .engine(let id) where id == .naive: 1
        case .engine(let id) where id == .openblas: 3
        // OpenCL devices, and any other device backend.
        case .engine: 0
        case .reference: 2
        case .auto: 4
        }
    }

    /// Turns each workload's rows are measured in (see ``SamplingPlan``).
    static let turns = 8

    func run() async -> BenchReport {
        let created = ISO8601DateFormatter().string(from: Date())
        let scalingAtStart = CoreAvailability.parallelScaling()
        let plan = SamplingPlan(budgetSeconds: options.effectiveBudgetSeconds, maximumIterations: options.maximumIterations, turns: Self.turns)
        let selected = workloads
        let progress = Progress(total: selected.reduce(0) { $0 + targets(for: $1).count } * plan.turns)
        var rows: [BenchRow] = []
        var skipped: [SkippedRow] = []
        var done = 0
        for workload in selected {
            let (prepared, preparationFailure) = await Prepared.make(workload)
            let (pending, notRun) = pendingRows(workload, prepared: prepared, preparationFailure: preparationFailure, plan: plan)
            skipped += notRun
            let failed = await measureInTurns(workload, pending, plan: plan, progress: progress, done: &done)
            skipped += failed
            done += (targets(for: workload).count - pending.count) * plan.turns
            rows += finishedRows(workload, pending.filter { row in !failed.contains { $0.backend == row.target.name } }, prepared: prepared)
        }
        progress.finish()
        var machine = MachineProbe.describe()
        machine.parallelScaling = [scalingAtStart, CoreAvailability.parallelScaling()]
        return BenchReport(
            tool: "tensorbench", created: created, suite: options.suiteLabel, budgetSeconds: plan.budgetSeconds,
            machine: machine, versions: MachineProbe.versions(), backends: backendStatuses(), rows: rows, skipped: skipped)
    }

    /// The workload's rows to measure, in report order, and those skipped with the reason.
    private func pendingRows(_ workload: Workload, prepared: Prepared, preparationFailure: Prepared.Failure?, plan: SamplingPlan) -> ([PendingRow], [SkippedRow]) {
        let available = Self.availableKinds
        var pending: [PendingRow] = []
        var skipped: [SkippedRow] = []
        for target in targets(for: workload) {
            if let preparationFailure, target != .reference {
                skipped.append(SkippedRow(workload: workload.name, backend: target.name, reason: preparationFailure.reason, detail: preparationFailure.detail))
                continue
            }
            if case .engine(let kind) = target, !available.contains(kind) {
                skipped.append(SkippedRow(workload: workload.name, backend: target.name, reason: "unavailable", detail: Self.statuses.first { $0.id == kind }?.unavailableReason))
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
            if let row = pendingRow(workload, target, prepared: prepared, plan: plan) { pending.append(row) }
        }
        return (pending, skipped)
    }

    /// Takes the rows' runs turn by turn, in measuring order (odd turns backwards: a row measured
    /// right after another matrix-product row came out 10-20% slower than the same work measured
    /// first, whichever it was, so each row takes each place equally often). Returns the rows that
    /// failed, which take no more turns.
    private func measureInTurns(_ workload: Workload, _ pending: [PendingRow], plan: SamplingPlan, progress: Progress, done: inout Int) async -> [SkippedRow] {
        var failed: [Int: SkippedRow] = [:]
        let order = pending.indices.sorted { Self.measuringRank(pending[$0].target) < Self.measuringRank(pending[$1].target) }
        for turn in 0..<plan.turns {
            for index in (turn % 2 == 0 ? order : order.reversed()) where failed[index] == nil {
                let row = pending[index]
                progress.show(done, workload.name, row.target.name)
                done += 1
                do {
                    try await row.sampler.takeTurn(turn)
                } catch let error as TensorError where error.kind == .unsupported {
                    // A backend that does not claim some op of the workload (openblas computes
                    // only Float; a model's integer masks run elsewhere under auto or cpuOnly).
                    failed[index] = SkippedRow(workload: workload.name, backend: row.target.name, reason: "unsupported", detail: "\(error)")
                } catch {
                    failed[index] = SkippedRow(workload: workload.name, backend: row.target.name, reason: "failed", detail: "\(error)")
                }
            }
        }
        return failed.keys.sorted().compactMap { failed[$0] }
    }

    /// The report's rows from what the turns measured, with throughput and the ratio to the
    /// workload's reference row (measured first in report order).
    private func finishedRows(_ workload: Workload, _ measured: [PendingRow], prepared: Prepared) -> [BenchRow] {
        var rows: [BenchRow] = []
        var referenceMedian: Double?
        for pendingRow in measured {
            guard var row = row(workload, pendingRow.target, pendingRow.sampler.measurement, detail: pendingRow.detail) else { continue }
            row.setThroughput(flops: workload.flops, bytes: workload.essentialBytes)
            if pendingRow.target == .reference { referenceMedian = row.medianSeconds }
            if let referenceMedian, referenceMedian > 0 { row.referenceRatio = row.medianSeconds / referenceMedian }
            row.peakLiveBytes = pendingRow.statistics.value?.peakLiveBytes
            row.totalIntermediateBytes = pendingRow.statistics.value?.totalIntermediateBytes
            if pendingRow.target == .auto, let (graph, preparedRuns) = prepared.planningGraph {
                // A fresh graph of the same structure: the estimate of the plan the runs used.
                row.estimatedSeconds =
                    try? ComputePlan(for: graph(), policy: .all, prepared: preparedRuns).totalEstimatedSeconds
            }
            row.peakResidentBytes = MachineProbe.peakResidentBytes()
            rows.append(row)
        }
        return rows
    }

    /// A row being measured: its target, its runs, and what its last run reported.
    private struct PendingRow {
        let target: Target
        let sampler: RowSampler
        let detail: String?
        /// The engine's statistics of the row's last run (reference rows have none).
        let statistics: StatisticsBox
    }

    /// Where a row's runs leave the engine's statistics of the last evaluation.
    private final class StatisticsBox {
        var value: EvaluationStatistics?
    }

    /// The row's sampler over the runs it times; `nil` when the target has nothing to run.
    private func pendingRow(_ workload: Workload, _ target: Target, prepared: Prepared, plan: SamplingPlan) -> PendingRow? {
        let statistics = StatisticsBox()
        let policy: ComputePolicy
        switch target {
        case .reference:
            guard let kernel = BareKernel.make(for: workload.reference) else { return nil }
            return PendingRow(target: target, sampler: RowSampler(plan: plan) { kernel.run() }, detail: kernel.name, statistics: statistics)
        case .engine(let kind): policy = .only(kind)
        case .auto: policy = .all
        }
        let body: () async throws -> Void
        switch prepared {
        case .graph(let inputs, let graph):
            let readsBack = workload.readsBack
            body = {
                let outputs = graph(inputs)
                statistics.value = try await Tensor.evaluate(outputs, policy: policy)
                // What a user pays: the results read back, not only computed.
                if readsBack { for output in outputs { try await output.readBack() } }
            }
        case .embedding(let embedder, let sentences):
            body = { _ = try await embedder.embed(sentences, policy: policy) }
        case .onnx(let model, let inputs):
            body = {
                let outputs = try await model.prediction(from: inputs, policy: policy)
                for output in outputs.values { try await output.readBack() }
            }
        case .decoderStep(let model, let cache, let step, let tokens):
            let session = DecoderSession(model: model, cache: cache, first: step, policy: policy)
            body = { try await session.run(tokens: tokens) }
        case .modelBatch(let model, let providers, let batching):
            body = {
                let options = PredictionOptions()
                options.computePolicy = policy
                var outputs: [any FeatureProvider] = []
                switch batching {
                case .stacked:
                    let batch = try await model.predictions(from: ArrayBatchProvider(array: providers), options: options)
                    outputs = (0..<batch.count).map(batch.features(at:))
                case .oneByOne:
                    for provider in providers { outputs.append(try await model.prediction(from: provider, options: options)) }
                }
                for output in outputs {
                    for name in output.featureNames {
                        if let tensor = output.featureValue(for: name)?.tensorValue { try await tensor.readBack() }
                    }
                }
            }
        case .unavailable:
            return nil
        }
        return PendingRow(target: target, sampler: RowSampler(plan: plan, body), detail: nil, statistics: statistics)
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
    static var availableKinds: [BackendID] { statuses.filter(\.isAvailable).map(\.id) }

    /// The device and whether the planner's profile for it is calibrated (else defaults).
    private static func describe(_ status: BackendStatus) -> String {
        let profile = status.profile.map { $0.calibrated ? "calibrated profile" : "default profile" } ?? "no profile"
        return "\(status.deviceName ?? "unknown device"); \(profile)"
    }

    private func backendStatuses() -> [ReportedBackend] {
        Self.statuses.map { status in
            ReportedBackend(name: status.id.name, available: status.isAvailable,
                            detail: status.unavailableReason ?? Self.describe(status))
        }
    }
}

extension Tensor {
    /// Reads the evaluated result back as a user does, in its own scalar type.
    fileprivate func readBack() async throws {
        switch dtype {
        case .float32: _ = try await shapedArray(of: Float.self)
        case .float16: _ = try await shapedArray(of: Float16.self)
        case .int32: _ = try await shapedArray(of: Int32.self)
        case .bool: _ = try await shapedArray(of: Bool.self)
        case .int64: _ = try await shapedArray(of: Int64.self)
        case .float64: _ = try await shapedArray(of: Double.self)
        }
    }
}
