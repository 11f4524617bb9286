import Foundation
import TensorEngine

/// Runs every workload in measure mode and prints how well the cost model ranks and sizes ops.
func runQuality(policy: ComputePolicy) async {
    var estimated: [BackendKind: [Double]] = [:]
    var measured: [BackendKind: [Double]] = [:]
    print("workload          ops  estimated   measured   planning µs/node (uncached, cached)")
    for workload in Workload.all {
        do {
            let graph = try await workload.preparedGraph()
            let cost = try PlanQuality.planningMicroseconds(graph(), policy: policy, repeats: 20)
            // Warm up once (first-run costs such as kernel builds are not the model's business).
            _ = try await ComputePlan(for: graph(), policy: policy).measured()
            let plan = try await ComputePlan(for: graph(), policy: policy).measured()
            let total = plan.operations.compactMap(\.measuredSeconds).reduce(0, +)
            for operation in plan.operations where operation.cost.flops + operation.cost.bytesMoved > 0 {
                guard let seconds = operation.measuredSeconds else { continue }
                estimated[operation.deviceUsage.preferred, default: []].append(operation.estimatedCost.seconds)
                measured[operation.deviceUsage.preferred, default: []].append(seconds)
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
}
