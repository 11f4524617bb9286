import Foundation
import TensorEngine

/// Runs every workload in measure mode and prints how well the cost model ranks and sizes ops.
///
/// Each op's measured time is the median of `runs` measured runs after one warm-up run (first-run
/// costs such as kernel builds, and one-off scheduling noise on a shared machine, are not the cost
/// model's business). With `detail`, a table per backend and op kind follows: how many ops, and
/// the median estimate, measurement and estimate/measurement ratio, which shows where the model
/// is off and by how much.
func runQuality(policy: ComputePolicy, runs: Int = 3, detail: Bool = false) async {
    var estimated: [BackendKind: [Double]] = [:]
    var measured: [BackendKind: [Double]] = [:]
    var byKind: [String: (estimated: [Double], measured: [Double])] = [:]
    print("workload          ops  estimated   measured   planning µs/node (uncached, cached)")
    for workload in Workload.all {
        do {
            let graph = try await workload.preparedGraph()
            let cost = try PlanQuality.planningMicroseconds(graph(), policy: policy, repeats: 20)
            _ = try await ComputePlan(for: graph(), policy: policy).measured()
            var plans: [ComputePlan] = []
            for _ in 0..<max(1, runs) { plans.append(try await ComputePlan(for: graph(), policy: policy).measured()) }
            let plan = plans[0]
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
                byKind["\(backend.rawValue) \(kind)", default: ([], [])].estimated.append(operation.estimatedCost.seconds)
                byKind["\(backend.rawValue) \(kind)", default: ([], [])].measured.append(seconds)
            }
            print(workload.name.padding(toLength: 16, withPad: " ", startingAt: 0),
                  String(format: "%4d  %9.3f ms %9.3f ms   %.2f, %.2f", plan.operations.count, plan.totalEstimatedSeconds * 1e3, total * 1e3, cost.uncached, cost.cached))
        } catch {
            print("\(workload.name): \(error)")
        }
    }
    for backend in BackendKind.allCases {
        guard let e = estimated[backend], let m = measured[backend], e.count > 1 else { continue }
        print(String(format: "%@: %d ops, Spearman %.3f, median relative error %.2f",
                     backend.rawValue, e.count, PlanQuality.spearman(e, m), PlanQuality.medianRelativeError(estimated: e, measured: m)))
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

/// The middle value (the upper one of an even count), or NaN when there is none.
private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}
