import Dispatch
import TensorBenchCore

/// The times of one row: the first run apart, then the measured runs.
struct Measurement {
    /// The first run: planning, kernel compilation, cold caches.
    let firstRunSeconds: Double
    /// The measured runs after the warm-up.
    let samples: [Double]
}

/// Takes one row's runs under a sampling plan, turn by turn (see ``SamplingPlan``): in its first
/// turn the first run (timed apart) and warm-up runs, in later ones an untimed run first where
/// that is cheap, then measured runs while the plan wants them.
final class RowSampler {
    private let plan: SamplingPlan
    private let body: () async throws -> Void
    private var firstRunSeconds: Double?
    private var samples: [Double] = []
    private var elapsed = 0.0

    init(plan: SamplingPlan, _ body: @escaping () async throws -> Void) {
        self.plan = plan
        self.body = body
    }

    /// Monotonic seconds.
    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Takes the row's runs of `turn` (0-based).
    func takeTurn(_ turn: Int) async throws {
        if firstRunSeconds == nil {
            var start = Self.now()
            try await body()
            let first = Self.now() - start
            firstRunSeconds = first
            var warmUp = first
            var warmUpRuns = 0
            while warmUp < plan.warmUpSeconds, warmUpRuns < SamplingPlan.maximumWarmUpRuns {
                start = Self.now()
                try await body()
                warmUp += Self.now() - start
                warmUpRuns += 1
            }
        } else if !samples.isEmpty, plan.warmsUpBetweenTurns(typical: elapsed / Double(samples.count)) {
            try await body()
        }
        while plan.wantsAnotherSample(taken: samples.count, elapsed: elapsed, turn: turn) {
            let start = Self.now()
            try await body()
            let seconds = Self.now() - start
            samples.append(seconds)
            elapsed += seconds
        }
    }

    /// What the turns taken so far measured.
    var measurement: Measurement { Measurement(firstRunSeconds: firstRunSeconds ?? 0, samples: samples) }
}
