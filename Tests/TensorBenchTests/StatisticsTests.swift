import Testing
@testable import TensorBenchCore

@Suite struct StatisticsTests {
    @Test func orderStatisticsOfHandMadeSamples() throws {
        // 1…10 shuffled: median (5+6)/2, nearest-rank p90 = 9th sample = 9.
        let statistics = try #require(SampleStatistics([7, 3, 10, 1, 5, 9, 2, 8, 6, 4]))
        #expect(statistics.count == 10)
        #expect(statistics.min == 1)
        #expect(statistics.max == 10)
        #expect(statistics.median == 5.5)
        #expect(statistics.p90 == 9)
        #expect(statistics.p99 == nil)
        #expect(statistics.mean == 5.5)
    }

    @Test func oddCountMedianAndSingleSample() throws {
        let three = try #require(SampleStatistics([0.3, 0.1, 0.2]))
        #expect(three.median == 0.2)
        #expect(three.p90 == 0.3)
        let one = try #require(SampleStatistics([0.25]))
        #expect(one.min == 0.25 && one.median == 0.25 && one.p90 == 0.25)
    }

    @Test func p99OnlyWithAHundredSamples() throws {
        let samples = (1...200).map { Double($0) }
        let statistics = try #require(SampleStatistics(samples))
        #expect(statistics.p99 == 198)  // rank ⌈0.99·200⌉ = 198
        #expect(statistics.p90 == 180)
        #expect(SampleStatistics(Array(samples.prefix(99)))?.p99 == nil)
    }

    @Test func rejectsEmptyAndNonFiniteSamples() {
        #expect(SampleStatistics([]) == nil)
        #expect(SampleStatistics([1, .nan]) == nil)
        #expect(SampleStatistics([1, -1]) == nil)
        #expect(SampleStatistics([.infinity]) == nil)
    }

    @Test func samplingStopsAtBudgetCapAndFloor() {
        let plan = SamplingPlan(budgetSeconds: 1, maximumIterations: 50, minimumIterations: 5)
        #expect(plan.wantsAnotherSample(taken: 0, elapsed: 0))
        #expect(plan.wantsAnotherSample(taken: 10, elapsed: 0.5))
        #expect(!plan.wantsAnotherSample(taken: 50, elapsed: 0.5))  // cap
        #expect(!plan.wantsAnotherSample(taken: 10, elapsed: 1.2))  // budget spent, floor met
        #expect(plan.wantsAnotherSample(taken: 3, elapsed: 1.2))  // fast rows: floor of 5
        #expect(plan.wantsAnotherSample(taken: 1, elapsed: 3))  // slow rows: floor of 2
        #expect(!plan.wantsAnotherSample(taken: 2, elapsed: 6))
    }

    /// In turns, a row spends each turn's share of the budget and of the cap, and the floors
    /// apply only in the last turn.
    @Test func samplingInTurnsSpendsAShareEachTurn() {
        let plan = SamplingPlan(budgetSeconds: 1, maximumIterations: 40, minimumIterations: 5, turns: 4)
        #expect(plan.wantsAnotherSample(taken: 0, elapsed: 0, turn: 0))
        #expect(!plan.wantsAnotherSample(taken: 3, elapsed: 0.25, turn: 0))  // first quarter spent
        #expect(plan.wantsAnotherSample(taken: 3, elapsed: 0.25, turn: 1))
        #expect(!plan.wantsAnotherSample(taken: 10, elapsed: 0.1, turn: 0))  // a quarter of the cap
        #expect(plan.wantsAnotherSample(taken: 10, elapsed: 0.1, turn: 1))
        #expect(!plan.wantsAnotherSample(taken: 40, elapsed: 0.5, turn: 3))  // the cap
        #expect(!plan.wantsAnotherSample(taken: 1, elapsed: 3, turn: 2))  // slow row: no floor yet
        #expect(plan.wantsAnotherSample(taken: 1, elapsed: 3, turn: 3))  // the floor of 2, at the end
        #expect(!plan.wantsAnotherSample(taken: 2, elapsed: 6, turn: 3))
        #expect(plan.warmsUpBetweenTurns(typical: 0.001))
        #expect(!plan.warmsUpBetweenTurns(typical: 0.05))  // a tenth of the 0.25 s share is 0.025
    }
}
