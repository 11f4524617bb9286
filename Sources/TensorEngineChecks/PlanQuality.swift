import TensorEngine
import Dispatch

/// Checks of the cost model against measurements: rank correlation and relative error of
/// estimated against measured per-op times, and the planner's own cost.
package enum PlanQuality {
    /// Spearman's rank correlation of two equally long samples (ties get their average rank).
    package static func spearman(_ x: [Double], _ y: [Double]) -> Double {
        guard x.count == y.count, x.count > 1 else { return .nan }
        func ranks(_ values: [Double]) -> [Double] {
            let order = values.indices.sorted { values[$0] < values[$1] }
            var result = [Double](repeating: 0, count: values.count)
            var start = 0
            while start < order.count {
                var end = start
                while end + 1 < order.count, values[order[end + 1]] == values[order[start]] { end += 1 }
                let rank = Double(start + end) / 2 + 1
                for position in start...end { result[order[position]] = rank }
                start = end + 1
            }
            return result
        }
        let (rx, ry) = (ranks(x), ranks(y))
        let mx = rx.reduce(0, +) / Double(rx.count)
        let my = ry.reduce(0, +) / Double(ry.count)
        var covariance = 0.0, vx = 0.0, vy = 0.0
        for (a, b) in zip(rx, ry) {
            covariance += (a - mx) * (b - my)
            vx += (a - mx) * (a - mx)
            vy += (b - my) * (b - my)
        }
        return vx > 0 && vy > 0 ? covariance / (vx * vy).squareRoot() : .nan
    }

    /// The median of |estimate − measured| / measured.
    package static func medianRelativeError(estimated: [Double], measured: [Double]) -> Double {
        let errors = zip(estimated, measured).filter { $0.1 > 0 }.map { abs($0.0 - $0.1) / $0.1 }.sorted()
        guard !errors.isEmpty else { return .nan }
        return errors.count % 2 == 1 ? errors[errors.count / 2] : (errors[errors.count / 2 - 1] + errors[errors.count / 2]) / 2
    }

    /// Microseconds per node to plan the graph behind `targets`: uncached (a fresh plan each time)
    /// and cached (a hit in a warm cache).
    package static func planningMicroseconds(_ targets: [Tensor], policy: ComputePolicy, repeats: Int = 50) throws(TensorError) -> (uncached: Double, cached: Double, nodes: Int) {
        let nodes = targets.compactMap(\.node)
        let engine = Engine.shared
        let planner = Planner(backends: engine.backends, profiles: engine.profiles, policy: policy)
        let count = max(1, PendingGraph(targets: nodes).pendingCount)
        // The best of at least `repeats` runs spread over at least 50 ms: right after a large
        // product, OpenBLAS's threads keep spinning on the cores for a while, and a few
        // microseconds of runs all fall inside that window.
        func time(_ body: () throws(TensorError) -> Void) throws(TensorError) -> Double {
            var best = Double.infinity
            let begin = DispatchTime.now().uptimeNanoseconds
            var runs = 0
            while runs < repeats || DispatchTime.now().uptimeNanoseconds - begin < 50_000_000 {
                let start = DispatchTime.now().uptimeNanoseconds
                try body()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3)
                runs += 1
            }
            return best / Double(count)
        }
        let uncached = try time { () throws(TensorError) in _ = try planner.plan(targets: nodes) }
        let cache = PlanCache(capacity: 4)
        _ = try planner.plan(targets: nodes, cache: cache)
        let cached = try time { () throws(TensorError) in _ = try planner.plan(targets: nodes, cache: cache) }
        return (uncached, cached, count)
    }
}
