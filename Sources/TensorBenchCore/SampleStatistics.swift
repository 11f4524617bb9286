/// Order statistics of a set of timing samples, in seconds.
///
/// Percentiles use the nearest-rank definition: the p-th percentile of n sorted samples is the
/// sample at rank ⌈p·n/100⌉ (1-based), so every reported figure is a time that was measured.
public struct SampleStatistics: Sendable, Hashable {
    /// How many samples there were.
    public let count: Int
    /// The fastest sample.
    public let min: Double
    /// The median (for an even count, the mean of the two middle samples).
    public let median: Double
    /// The 90th percentile (nearest rank).
    public let p90: Double
    /// The 99th percentile (nearest rank), only when there are at least
    /// ``SampleStatistics/minimumCountForP99`` samples.
    public let p99: Double?
    /// The arithmetic mean.
    public let mean: Double
    /// The slowest sample.
    public let max: Double

    /// Below this many samples a 99th percentile would only be the maximum, so none is reported.
    public static let minimumCountForP99 = 100

    /// Summarises samples; `nil` when there are none or any is not a finite, non-negative number.
    public init?(_ samples: [Double]) {
        guard !samples.isEmpty, samples.allSatisfy({ $0.isFinite && $0 >= 0 }) else { return nil }
        let sorted = samples.sorted()
        let count = sorted.count
        self.count = count
        self.min = sorted[0]
        self.max = sorted[count - 1]
        self.median = count % 2 == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2
        self.p90 = Self.nearestRank(90, in: sorted)
        self.p99 = count >= Self.minimumCountForP99 ? Self.nearestRank(99, in: sorted) : nil
        self.mean = sorted.reduce(0, +) / Double(count)
    }

    /// The nearest-rank percentile of sorted, non-empty samples.
    static func nearestRank(_ percent: Double, in sorted: [Double]) -> Double {
        let rank = Int((percent / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank - 1))]
    }
}

/// When a measurement loop stops: a time budget, an iteration cap and a floor of samples, spread
/// over turns.
///
/// The rows of one workload are measured in turns: each row takes its share of the budget in
/// every turn, the rows alternating, so a change in the machine's speed while the workload is
/// measured (a shared machine's other tenants) falls on every row alike instead of on whichever
/// row ran then. Comparisons between rows (auto against the fastest backend, a backend against
/// the bare reference kernel) are what the suite is for.
public struct SamplingPlan: Sendable, Hashable {
    /// Seconds of measured runs to aim for per row.
    public var budgetSeconds: Double
    /// The most measured runs per row.
    public var maximumIterations: Int
    /// The fewest measured runs per row, unless one run is slower than the whole budget.
    public var minimumIterations: Int
    /// The turns the budget is split into (1: each row measured in one go).
    public var turns: Int

    /// Creates a plan.
    public init(budgetSeconds: Double, maximumIterations: Int = 1000, minimumIterations: Int = 5, turns: Int = 1) {
        self.budgetSeconds = budgetSeconds
        self.maximumIterations = maximumIterations
        self.minimumIterations = minimumIterations
        self.turns = Swift.max(1, turns)
    }

    /// Seconds of untimed warm-up runs after the first run: a tenth of the budget.
    public var warmUpSeconds: Double { budgetSeconds / 10 }

    /// The most warm-up runs after the first one.
    public static let maximumWarmUpRuns = 3

    /// The fewest measured runs when a single run takes more than half the budget: two, so a
    /// row's median is never one unrepeated sample, and slow rows still end soon.
    public static let minimumIterationsForSlowRows = 2

    /// Whether to take another sample in `turn` (0-based) after `taken` samples that took
    /// `elapsed` seconds in all: by the end of a turn, a row has spent that turn's share of the
    /// budget and of the iteration cap (so a fast row capped at the maximum still samples every
    /// turn); the floors apply in the last turn.
    public func wantsAnotherSample(taken: Int, elapsed: Double, turn: Int = 0) -> Bool {
        let last = turns - 1
        let fraction = Double(Swift.min(Swift.max(turn, 0), last) + 1) / Double(turns)
        guard taken < maximumIterations, Double(taken) < (Double(maximumIterations) * fraction).rounded(.up) else { return false }
        if elapsed < budgetSeconds * fraction { return true }
        guard turn >= last else { return false }
        let typical = taken > 0 ? elapsed / Double(taken) : 0
        let floor = typical > budgetSeconds / 2 ? Self.minimumIterationsForSlowRows : minimumIterations
        return taken < floor
    }

    /// Whether a row whose runs take `typical` seconds gets an untimed run at the start of a later
    /// turn, to bring back its own state (caches, pooled buffers) after the other rows ran: when
    /// that run costs under a tenth of the turn's share.
    public func warmsUpBetweenTurns(typical: Double) -> Bool {
        typical * 10 < budgetSeconds / Double(turns)
    }
}
