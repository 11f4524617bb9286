import Foundation
import Synchronization
import Testing
@testable import TensorEngine

/// A model that doubles its input tensor.
struct DoublingModel: ModelImplementation {
    var modelDescription: ModelDescription {
        let constraint = MultiArrayConstraint(shape: [.symbolic("n")], modelElementType: "float", dataType: .float32)
        return ModelDescription(
            inputs: [FeatureDescription(name: "x", type: .multiArray, multiArrayConstraint: constraint)],
            outputs: [FeatureDescription(name: "y", type: .multiArray, multiArrayConstraint: constraint)])
    }

    func prediction(from input: any FeatureProvider, policy: ComputePolicy) throws -> any FeatureProvider {
        guard let x = input.featureValue(for: "x")?.tensorValue else {
            throw ModelInputError(featureName: "x", message: "a tensor is required")
        }
        return DictionaryFeatureProvider(tensors: ["y": x * 2])
    }
}

struct LoadFailure: Error {}

/// A thread-safe counter closures can share.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ amount: Int) { count.add(amount, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

@Suite("FeatureProviders and models") struct FeatureProviderTests {
    @Test func dictionaryProviderGivesItsValues() async throws {
        let provider = DictionaryFeatureProvider(["x": .tensor(Tensor([1, 2] as [Float])), "name": .string("n")])
        #expect(provider.featureNames == ["x", "name"])
        #expect(provider.featureValue(for: "name")?.stringValue == "n")
        #expect(provider.featureValue(for: "name")?.tensorValue == nil)
        #expect(try await provider.featureValue(for: "x")?.tensorValue?.shapedArray(of: Float.self).scalars == [1, 2])
        #expect(provider.featureValue(for: "missing") == nil)
    }

    @Test func lazyProviderComputesOnlyWhatIsAskedForAndOnlyOnce() {
        let calls = Counter()
        let provider = LazyFeatureProvider([
            "a": { calls.add(1); return .string("a") },
            "b": { calls.add(100); return .string("b") },
        ])
        #expect(provider.featureNames == ["a", "b"])
        #expect(provider.computedFeatureNames.isEmpty)
        #expect(provider.featureValue(for: "a")?.stringValue == "a")
        #expect(provider.featureValue(for: "a")?.stringValue == "a")
        #expect(calls.value == 1)
        #expect(provider.computedFeatureNames == ["a"])
    }

    @Test func batchPredictionsDefaultToOneAfterAnother() async throws {
        let model = Model(implementation: DoublingModel())
        let outputs = try await model.predictions(from: [1, 2, 3].map { DictionaryFeatureProvider(tensors: ["x": Tensor([Float($0)])]) })
        var values: [Float] = []
        for output in outputs { values += try await output.featureValue(for: "y")?.tensorValue?.shapedArray(of: Float.self).scalars ?? [] }
        #expect(values == [2, 4, 6])
        await #expect(throws: ModelInputError.self) { try await model.prediction(from: DictionaryFeatureProvider([:])) }
    }

    @Test func cacheLoadsEachModelOnceAcrossTasks() async throws {
        let cache = ModelCache()
        let url = URL(fileURLWithPath: "/models/doubling")
        let loads = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let model = try await cache.model(at: url) { _ in
                        loads.add(1)
                        try await Task.sleep(for: .milliseconds(20))
                        return Model(implementation: DoublingModel())
                    }
                    #expect(model.modelDescription.inputDescriptionsByName.keys.sorted() == ["x"])
                }
            }
            try await group.waitForAll()
        }
        #expect(await cache.loadCount == 1)
        #expect(loads.value == 1)
    }

    @Test func cacheForgetsFailedLoads() async throws {
        let cache = ModelCache()
        let url = URL(fileURLWithPath: "/models/failing")
        await #expect(throws: LoadFailure.self) { try await cache.model(at: url) { _ -> Model in throw LoadFailure() } }
        let model = try await cache.model(at: url) { _ in Model(implementation: DoublingModel()) }
        #expect(model.modelDescription.outputDescriptionsByName.keys.sorted() == ["y"])
        #expect(await cache.loadCount == 2)
    }
}
