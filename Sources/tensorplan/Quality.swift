import Foundation
import TensorEngine
import TensorEngineChecks

/// Runs every workload in measure mode and prints how well the cost model ranks and sizes ops.
///
/// Each op's measured time is the median of `runs` measured runs, each after warm-up runs
/// (first-run costs such as kernel builds and page faults are not the cost model's business).
/// The runs are rounds over the whole suite, not back-to-back runs of one workload: on a shared
/// machine a neighbour's burst slows every op measured while it lasts, and back-to-back runs
/// would all fall inside it. With `detail`, a table per backend and op kind follows: how many
/// ops, and the median estimate, measurement and estimate/measurement ratio, which shows where
/// the model is off and by how much. With `csvPath`, every op's estimate and measurement is
/// written there as CSV.
func runQuality(policy: ComputePolicy, runs: Int = 3, detail: Bool = false, csvPath: String? = nil) async {
    var estimated: [BackendID: [Double]] = [:]
    var measured: [BackendID: [Double]] = [:]
    var byKind: [String: (estimated: [Double], measured: [Double])] = [:]
    var csv = "backend,workload,index,op,shape,flops,bytes,estimated_seconds,measured_seconds\n"
    print("workload          ops  estimated   measured   planning µs/node (uncached, cached)")
    // Planning cost and warm-up runs per workload, then the measured rounds.
    var prepared: [(workload: Workload, graph: @Sendable () -> [Tensor], planning: (uncached: Double, cached: Double))] = []
    for workload in Workload.all {
        do {
            let graph = try await workload.preparedGraph()
            let cost = try PlanQuality.planningMicroseconds(graph(), policy: policy, repeats: 20)
            try await warm(graph, policy: policy, seconds: 0.2)
            prepared.append((workload, graph, (cost.uncached, cost.cached)))
        } catch {
            print("\(workload.name): \(error)")
        }
    }
    var plans = [[ComputePlan]](repeating: [], count: prepared.count)
    for _ in 0..<max(1, runs) {
        for (index, entry) in prepared.enumerated() {
            do {
                // Runs right before the measured one: the workloads measured since the last
                // round took the pooled buffers, and fresh memory's page faults would count as
                // op time (a 16M-float chain 4x its steady cost). Skipped where they are too
                // small to matter against a run of a second or more.
                let last = plans[index].last?.operations.compactMap(\.measuredSeconds).reduce(0, +) ?? 0
                if last < 1 { try await warm(entry.graph, policy: policy, seconds: 0.02) }
                plans[index].append(try await ComputePlan(for: entry.graph(), policy: policy).measured())
            } catch {
                print("\(entry.workload.name): \(error)")
            }
        }
    }
    for ((workload, _, planning), plans) in zip(prepared, plans) {
        guard let plan = plans.first else { continue }
        let medians: [Double?] = plan.operations.indices.map { index in
            let values = plans.compactMap { $0.operations.indices.contains(index) ? $0.operations[index].measuredSeconds : nil }
            return values.isEmpty ? nil : median(values)
        }
        let total = medians.compactMap { $0 }.reduce(0, +)
        for (operation, seconds) in zip(plan.operations, medians) where operation.cost.flops + operation.cost.bytesMoved > 0 {
            guard let seconds else { continue }
            let backend = operation.deviceUsage.preferred
            estimated[backend, default: []].append(operation.estimatedCost.seconds)
            measured[backend, default: []].append(seconds)
            let kind = operation.fusedOps.isEmpty ? operation.op : "fused"
            byKind["\(backend.name) \(kind)", default: ([], [])].estimated.append(operation.estimatedCost.seconds)
            byKind["\(backend.name) \(kind)", default: ([], [])].measured.append(seconds)
            let shape = operation.shape.map(String.init).joined(separator: "x")
            csv += "\(backend.name),\(workload.name),\(operation.index),\(kind),\(shape),"
                + "\(operation.cost.flops),\(operation.cost.bytesMoved),\(operation.estimatedCost.seconds),\(seconds)\n"
        }
        print(workload.name.padding(toLength: 16, withPad: " ", startingAt: 0),
              String(format: "%4d  %9.3f ms %9.3f ms   %.2f, %.2f", plan.operations.count, plan.totalEstimatedSeconds * 1e3, total * 1e3,
                     planning.uncached, planning.cached))
    }
    for backend in BackendStatus.all.map(\.id) {
        guard let e = estimated[backend], let m = measured[backend], e.count > 1 else { continue }
        print(String(format: "%@: %d ops, Spearman %.3f, median relative error %.2f",
                     backend.name, e.count, PlanQuality.spearman(e, m), PlanQuality.medianRelativeError(estimated: e, measured: m)))
    }
    if let csvPath {
        do {
            try csv.write(toFile: csvPath, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("tensorplan: could not write \(csvPath): \(error)\n".utf8))
        }
    }
    guard detail else { return }
    print("\nbackend op            ops  median est.  median meas.  median est./meas.")
    for (name, samples) in byKind.sorted(by: { $0.key < $1.key }) {
        let ratios = zip(samples.estimated, samples.measured).filter { $0.1 > 0 }.map { $0.0 / $0.1 }
        print(name.padding(toLength: 22, withPad: " ", startingAt: 0),
              String(format: "%4d  %9.1f µs  %9.1f µs  %6.2f", samples.measured.count,
                     median(samples.estimated) * 1e6, median(samples.measured) * 1e6, median(ratios)))
    }
}

/// Evaluates the workload's graph for at least `seconds` (at least once), so that what is measured
/// next is the steady state: a workload's first tens of runs are slower (a 0.7 ms attention block
/// took 2x its steady time for its first ~50 runs here, as memory and threads settle).
private func warm(_ graph: () -> [Tensor], policy: ComputePolicy, seconds: Double) async throws {
    let start = Date()
    repeat {
        try await ComputePlan(for: graph(), policy: policy).evaluate()
    } while Date().timeIntervalSince(start) < seconds
}

/// The middle value (the upper one of an even count), or NaN when there is none.
private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}
