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
        let samples = (1...200).map(Double.init)
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
}
