import Dispatch
import TensorBenchCore

/// The times of one row: the first run apart, then the measured runs.
struct Measurement {
    /// The first run: planning, kernel compilation, cold caches.
    let firstRunSeconds: Double
    /// The measured runs after the warm-up.
    let samples: [Double]
}

/// Runs a body under a sampling plan: first run, warm-up, then samples until the budget.
enum Sampler {
    /// Monotonic seconds.
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Times `body`: the first run is recorded apart and counts toward the warm-up; more warm-up
    /// runs follow (untimed) until a tenth of the budget has passed; then measured runs until
    /// ``SamplingPlan/wantsAnotherSample(taken:elapsed:)`` says stop.
    static func measure(_ plan: SamplingPlan, _ body: () async throws -> Void) async throws -> Measurement {
        var start = now()
        try await body()
        let first = now() - start
        var warmUp = first
        var warmUpRuns = 0
        while warmUp < plan.warmUpSeconds, warmUpRuns < SamplingPlan.maximumWarmUpRuns {
            start = now()
            try await body()
            warmUp += now() - start
            warmUpRuns += 1
        }
        var samples: [Double] = []
        var elapsed = 0.0
        while plan.wantsAnotherSample(taken: samples.count, elapsed: elapsed) {
            start = now()
            try await body()
            let seconds = now() - start
            samples.append(seconds)
            elapsed += seconds
        }
        return Measurement(firstRunSeconds: first, samples: samples)
    }
}
