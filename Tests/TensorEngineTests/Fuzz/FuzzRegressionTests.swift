import Foundation
import Testing
@testable import TensorEngine
import TensorEngineChecks

/// Every input a fuzz target ever flagged, replayed through the same check (Fixtures/fuzz/TARGET/),
/// and each finding restated as a hand-computed test on every backend.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static func inputs(_ target: FuzzChecks.Target) -> [URL] {
        guard let folder = Bundle.module.url(forResource: target.rawValue, withExtension: nil, subdirectory: "Fixtures/fuzz") else { return [] }
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        return files.filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }

    @Test(arguments: FuzzChecks.Target.allCases)
    func savedInputsPass(_ target: FuzzChecks.Target) async throws {
        let files = Self.inputs(target)
        #expect(target != .graph || !files.isEmpty, "the graph corpus is in Fixtures/fuzz/graph")
        for file in files {
            let finding = await FuzzChecks.run(target, Array(try Data(contentsOf: file)))
            #expect(finding == nil, "\(file.lastPathComponent): \(finding ?? "")")
        }
    }

    @Test func pseudoRandomGraphsAgree() async {
        // A fixed sample of the random-graph target's input space (the fuzzer explores far more).
        var state: UInt64 = 0x5EED
        for index in 0..<400 {
            var bytes: [UInt8] = []
            for _ in 0..<(8 + index % 56) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            let finding = await FuzzChecks.run(.graph, bytes)
            #expect(finding == nil, "input \(bytes.map { String(format: "%02x", $0) }.joined()): \(finding ?? "")")
        }
    }

    @Test func reencodedInputsKeepTheirPrograms() {
        // A language of fewer steps (today's first ones) stands for an older one: an input
        // re-encoded from it decodes today to the program it made then.
        var state: UInt64 = 0xC0DE
        for index in 0..<300 {
            var bytes: [UInt8] = []
            for _ in 0..<(8 + index % 64) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            let steps = 40 + index % 60
            let then = RandomGraph(decoding: bytes, stepCount: steps).entries
            let now = RandomGraph(decoding: RandomGraph.reencoded(bytes, fromStepCount: steps)).entries
            #expect(then.map(\.step) == now.map(\.step) && then.map(\.tensor.shape) == now.map(\.tensor.shape))
        }
    }

    static let policies = Engine.shared.backends.map { ComputePolicy.only($0.id) }

    /// Found by the graph target: a reshape of a contiguous empty tensor whose strides are not
    /// row-major (an empty axis before others) reached the backends as a "strided view".
    @Test(arguments: policies)
    func tilingAnEmptyTensor(_ policy: ComputePolicy) async throws {
        let x = Tensor(shape: [17, 1, 17], scalars: [Float](repeating: 1, count: 289))
        let tiled = x.tiled(multiples: [1, 1, 0])
        #expect(tiled.shape == [17, 1, 0])
        let values = try await withComputePolicy(policy) { try await tiled.reshaped(to: [0, 17]).shapedArray(of: Float.self) }
        #expect(values.shape == [0, 17] && values.scalars.isEmpty)
    }

    /// Found by the graph target: the openblas column reduction divided by a zero inner extent
    /// (a reduction whose kept axes include an empty one).
    @Test(arguments: policies)
    func reducingAlongAnAxisBeforeAnEmptyOne(_ policy: ComputePolicy) async throws {
        let x = Tensor(zeros: [2, 3, 0])
        for reduced in [x.sum(alongAxes: 1), x.mean(alongAxes: 1), x.max(alongAxes: 1), x.min(alongAxes: 1, keepRank: true)] {
            let values = try await withComputePolicy(policy) { try await reduced.shapedArray(of: Float.self) }
            #expect(values.scalars.isEmpty && values.shape.contains(0))
        }
    }

    /// Found by the graph target: openblas log-softmax folded max + log(sum) into one shift,
    /// which rounds log(3) away next to 8886110 (float spacing 1 there).
    @Test(arguments: policies)
    func logSoftmaxOfLargeTiedRows(_ policy: ComputePolicy) async throws {
        let x = Tensor(shape: [2, 4], scalars: [8_886_110, 8_886_110, 8_886_110, 1, -3e7, -3e7, -3e7, -3e7] as [Float])
        let values = try await withComputePolicy(policy) { try await x.logSoftmax(alongAxis: -1).shapedArray(of: Float.self).scalars }
        let logThree = Foundation.log(3.0), logFour = Foundation.log(4.0)
        let expected: [Double] = [-logThree, -logThree, -logThree, 1 - 8_886_110 - logThree, -logFour, -logFour, -logFour, -logFour]
        for (got, want) in zip(values, expected) {
            #expect(Swift.abs(Double(got) - want) <= 1e-6 * Swift.max(1, Swift.abs(want)), "\(values)")
        }
    }

    /// Found by the graph target's pseudo-random mode: a batched product with an empty batch
    /// axis (but non-empty matrices) indexed the first batch's offsets in the openblas backend.
    @Test(arguments: policies)
    func batchedProductWithAnEmptyBatch(_ policy: ComputePolicy) async throws {
        let a = Tensor(zeros: [0, 3, 4])
        let b = Tensor(zeros: [0, 4, 5])
        let product = try await withComputePolicy(policy) { try await a.matmul(b).shapedArray(of: Float.self) }
        #expect(product.shape == [0, 3, 5] && product.scalars.isEmpty)
        let broadcast = try await withComputePolicy(policy) { try await Tensor(zeros: [2, 0, 1, 3, 4]).matmul(Tensor(ones: [4, 2])).shapedArray(of: Float.self) }
        #expect(broadcast.shape == [2, 0, 1, 3, 2])
    }

    /// Found by the graph target: a product of `[33, 33]` matrices whose terms reach 3e7 and
    /// cancel to about 925. Every backend must be within `Float`'s summation bound
    /// (`k·u·Σ|aᵢbᵢ|`, `u = 2⁻²⁴`) of the exact value; that is 0.2% of this result, so the graph
    /// check compares such results within a bound propagated from the terms, not the result.
    @Test(arguments: policies)
    func productOfCancellingTerms(_ policy: ComputePolicy) async throws {
        var state = UInt32(0x15) &* 2_654_435_761 &+ 12_345
        let x = (0..<(33 * 33)).map { _ -> Float in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int(state >> 16) % 33 - 16) / 4
        }
        let e = x.map { Float(Foundation.exp(Double($0 * $0))) }
        let tensor = Tensor(shape: [33, 33], scalars: x)
        let product = try await withComputePolicy(policy) {
            try await (tensor * tensor).exp().matmul(tensor).shapedArray(of: Float.self).scalars
        }
        for (row, column) in [(8, 17), (0, 0), (32, 5)] {
            let terms = (0..<33).map { Double(e[row * 33 + $0]) * Double(x[$0 * 33 + column]) }
            let exact = terms.reduce(0, +), magnitudes = terms.map(Swift.abs).reduce(0, +)
            // exp itself within 16 ulp (the backends' own exp), then k + 1 roundings of the sum.
            let allowed = (16 + 34) * 0x1p-23 * magnitudes
            let difference = Swift.abs(Double(product[row * 33 + column]) - exact)
            #expect(difference <= allowed, "(\(row), \(column)) of \(policy)")
        }
    }

    /// The bound still catches a real difference: the saved cancelling product, with one
    /// element of the candidate moved by ten times its bound, is a finding.
    @Test func boundedComparisonFindsADifference() async throws {
        let file = try #require(Self.inputs(.graph).first { $0.lastPathComponent == "matmul-cancellation.bin" })
        let input = Array(try Data(contentsOf: file))
        let entry = try #require(RandomGraph(decoding: input).outputs.last)
        let expected = await FuzzChecks.values(of: entry.tensor, policy: .only(.naive))
        let boundTensor = try #require(entry.bound)
        let bound = try await FuzzChecks.values(of: boundTensor, policy: .only(.naive)).get()
        let reference = try expected.get()
        #expect(await FuzzChecks.compare(expected, expected, entry: entry) == nil)
        var moved = reference
        moved.elements[281] += 10 * bound.elements[281]
        let finding = await FuzzChecks.compare(expected, .success(moved), entry: entry)
        #expect(finding?.contains("element 281") == true, "\(finding ?? "no finding")")
    }

    /// Found by the graph target: padding whose extents each fit in an `Int` but whose element
    /// count does not trapped computing strides (it is a `tooLarge` error), and padding an empty
    /// tensor by a huge size trapped slicing out its interior (it is an empty tensor).
    @Test(arguments: policies)
    func paddingByAHugeSize(_ policy: ComputePolicy) async throws {
        let huge = Int.max / 2
        let overflowing = Tensor(zeros: [2, 3]).padded(forSizes: [(before: huge, after: 0), (before: 0, after: 0)])
        #expect(overflowing.error?.kind == .tooLarge)
        let empty = Tensor(zeros: [2, 0, 3]).padded(forSizes: [(huge, 0), (0, 0), (0, 0)], with: 1)
        let values = try await withComputePolicy(policy) { try await empty.shapedArray(of: Float.self) }
        #expect(values.shape == [huge + 2, 0, 3] && values.scalars.isEmpty)
    }

    /// Found by the graph target (graph/empty-softmax-of-huge-rows.bin): a log-softmax along the
    /// empty axis of a [2⁶² + 4, 0] tensor failed on naive, whose decomposition's row maximum
    /// ([2⁶² + 4, 1]) is larger than memory, while openblas's kernel gave the empty result. An
    /// empty result is made directly now, on every backend, for every composite op.
    @Test(arguments: policies)
    func compositeOpsOfEmptyTensorsWithHugeRows(_ policy: ComputePolicy) async throws {
        let rows = Int.max / 2
        let empty = Tensor(zeros: [2, 0]).padded(forSizes: [(rows, 0), (0, 0)], with: 0)
        for result in [empty.logSoftmax(alongAxis: 1), empty.softmax(alongAxis: 1), empty.layerNorm(alongAxis: 1)] {
            let values = try await withComputePolicy(policy) { try await result.shapedArray(of: Float.self) }
            #expect(values.shape == [rows + 2, 0] && values.scalars.isEmpty)
        }
        // A reduction over the empty axis is not empty: as large as the rows, a typed error.
        #expect(empty.variance(alongAxes: 1).error?.kind == .tooLarge)
    }

    /// Found by the graph target (graph/gather-vectors-beside-empty-axis.bin): an index-vector
    /// gather from a tensor with an extent past Int32 beside an empty axis trapped converting the
    /// extent. The same shapes made resizing build index lists as long as the huge extent and
    /// bandPart loop over its rows; each now sees the empty result first.
    @Test(arguments: policies)
    func hugeExtentsBesideAnEmptyAxis(_ policy: ComputePolicy) async throws {
        let huge = 1 << 40
        let empty = Tensor(zeros: [0, 2]).padded(forSizes: [(0, 0), (huge, 0)], with: 0)
        #expect(empty.shape == [0, huge + 2])
        let vectors = Tensor(shape: [1, 2], scalars: [0, 1] as [Int32])
        let tall = Tensor(zeros: [2, 0]).padded(forSizes: [(huge, 0), (0, 0)], with: 0)
        for result in [empty.gathering(atIndices: vectors), tall.resized(to: [3, 0]), empty.bandPart(lowerBandCount: 0, upperBandCount: 0)] {
            if result.error != nil { continue }
            let values = try? await withComputePolicy(policy) { try await result.shapedArray(of: Float.self) }
            #expect(values.map { $0.scalars.isEmpty } ?? true)
        }
        #expect(empty.resized(to: [1, 3]).error?.kind == .invalidArgument, "an empty axis cannot grow")
    }
}
