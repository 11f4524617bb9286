import Foundation
import TensorEngine
import Testing

/// Convolutions and poolings through the public API, with hand-computed results, on every policy;
/// and the typed errors of bad geometry.
@Suite("Convolution and pooling")
struct ConvolutionTests {
    static let policies: [ComputePolicy] = {
        var policies: [ComputePolicy] = [.only(.naive), .only(.openblas), .all]
        if BackendStatus.all.contains(where: { $0.id == .opencl && $0.isAvailable }) { policies.append(.only(.opencl)) }
        return policies
    }()

    /// `[1, 1, rows, columns]` holding 1, 2, 3, ... row by row.
    static func counting(_ rows: Int, _ columns: Int) -> Tensor {
        Tensor(shape: [1, 1, rows, columns], scalars: (1...(rows * columns)).map(Float.init))
    }

    static func values(_ tensor: Tensor, _ policy: ComputePolicy) async throws -> [Float] {
        try await Tensor.evaluate([tensor], policy: policy)
        return try await tensor.shapedArray(of: Float.self).scalars
    }

    @Test(arguments: policies) func convolutionsAddTheirWindows(_ policy: ComputePolicy) async throws {
        let x = Self.counting(3, 3)
        // 2x2 ones over 1...9: each output the sum of a 2x2 block.
        let ones = Tensor(ones: [1, 1, 2, 2], scalarType: Float.self)
        #expect(try await Self.values(conv2D(x, weight: ones), policy) == [12, 16, 24, 28])
        // 3x3 ones with same padding: the sums of each element's 3x3 neighbourhood.
        let box = x.convolution(weight: Tensor(ones: [1, 1, 3, 3], scalarType: Float.self), padding: .same)
        #expect(try await Self.values(box, policy) == [12, 21, 16, 27, 45, 33, 24, 39, 28])
        // Stride 2 with symmetric padding 1 reads the four corners' neighbourhoods.
        let strided = conv2D(
            x, weight: Tensor(ones: [1, 1, 3, 3], scalarType: Float.self), stride: (2, 2), padding: (1, 1))
        #expect(try await Self.values(strided, policy) == [12, 16, 24, 28])
        // 1-D with dilation 2 and a bias: y[i] = x[i] - x[i + 2] + 10.
        let line = Tensor(shape: [1, 1, 5], scalars: [1, 2, 3, 5, 8] as [Float])
        let difference = line.convolution(
            weight: Tensor(shape: [1, 1, 2], scalars: [1, -1] as [Float]), bias: Tensor([10] as [Float]), dilations: [2]
        )
        #expect(try await Self.values(difference, policy) == [8, 7, 5])
    }

    @Test(arguments: policies) func groupsKeepTheirChannelsApart(_ policy: ComputePolicy) async throws {
        // Two channels [1...4] and [5...8], a 1x1 weight per group: 2· the first, 3· the second.
        let x = Tensor(shape: [1, 2, 2, 2], scalars: (1...8).map(Float.init))
        let depthwise = x.convolution(weight: Tensor(shape: [2, 1, 1, 1], scalars: [2, 3] as [Float]), groupCount: 2)
        #expect(try await Self.values(depthwise, policy) == [2, 4, 6, 8, 15, 18, 21, 24])
        // One group: every output channel sums both input channels.
        let mixed = x.convolution(weight: Tensor(shape: [1, 2, 1, 1], scalars: [1, 1] as [Float]))
        #expect(try await Self.values(mixed, policy) == [6, 8, 10, 12])
    }

    @Test(arguments: policies) func transposedConvolutionsSpreadEachInput(_ policy: ComputePolicy) async throws {
        let x = Self.counting(2, 2)
        let ones = Tensor(ones: [1, 1, 2, 2], scalarType: Float.self)
        // Stride 2: each input becomes a 2x2 block.
        let blocks = x.transposedConvolution(weight: ones, strides: [2, 2])
        #expect(try await Self.values(blocks, policy) == [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4])
        // Stride 1: overlapping blocks add up.
        #expect(try await Self.values(x.transposedConvolution(weight: ones), policy) == [1, 3, 2, 4, 10, 6, 3, 7, 4])
        // Padding 1 on each side removes the border of that result.
        let cropped = x.transposedConvolution(weight: ones, padding: [(1, 1), (1, 1)])
        #expect(try await Self.values(cropped, policy) == [10])
        #expect(blocks.shape == [1, 1, 4, 4])
    }

    @Test(arguments: policies) func poolsTakeTheirWindows(_ policy: ComputePolicy) async throws {
        let x = Self.counting(4, 4)
        #expect(try await Self.values(x.maxPool(kernelSize: [2, 2], strides: [2, 2]), policy) == [6, 8, 14, 16])
        // Ceil mode keeps the partial last window of 1...9.
        let ceiled = Self.counting(3, 3).maxPool(kernelSize: [2, 2], strides: [2, 2], ceilMode: true)
        #expect(try await Self.values(ceiled, policy) == [5, 6, 8, 9])
        #expect(try await Self.values(Self.counting(3, 3).averagePool(kernelSize: [3, 3]), policy) == [5])
        // [[1, 2], [3, 4]] with padding 1: a corner window holds one element of four positions.
        let small = Self.counting(2, 2)
        let inside = small.averagePool(kernelSize: [2, 2], padding: .symmetric([1, 1]))
        #expect(try await Self.values(inside, policy) == [1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4])
        let counted = small.averagePool(kernelSize: [2, 2], padding: .symmetric([1, 1]), countIncludingPadding: true)
        #expect(try await Self.values(counted, policy) == [0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1])
        #expect(try await Self.values(x.globalAveragePool(), policy) == [8.5])
        #expect(try await Self.values(x.globalMaxPool(), policy) == [16])
        // A NaN wins its window's maximum.
        let nan = Tensor(shape: [1, 1, 1, 4], scalars: [1, .nan, 3, 4] as [Float]).maxPool(
            kernelSize: [1, 2], strides: [1, 2])
        let pooled = try await Self.values(nan, policy)
        #expect(pooled[0].isNaN && pooled[1] == 4)
    }

    /// A NaN wins its windows' maxima and an infinity stays one in rows pooled 64 or 16 at a time
    /// (a whole chunk, a last chunk of more than 32, strips), as the reference computes them.
    @Test(arguments: [40, 100, 150]) func stripedMaximaKeepNaNsAndInfinities(_ width: Int) async throws {
        var scalars = (0..<(3 * 7 * width)).map { Float(($0 * 37) % 101) / 10 - 5 }
        scalars[(0 * 7 + 3) * width + width / 2] = .nan
        scalars[(1 * 7 + 2) * width + 5] = .infinity
        scalars[(2 * 7 + 4) * width + width - 3] = -.infinity
        // A graph of its own per policy: an evaluated tensor keeps its first result.
        func pooled() -> Tensor {
            Tensor(shape: [1, 3, 7, width], scalars: scalars).maxPool(kernelSize: [3, 3], strides: [2, 2])
        }
        let expected = try await Self.values(pooled(), .only(.naive))
        #expect(expected.contains { $0.isNaN } && expected.contains(.infinity))
        for policy in Self.policies.dropFirst() {
            let values = try await Self.values(pooled(), policy)
            #expect(values.count == expected.count)
            let same = zip(values, expected).allSatisfy { $0.isNaN ? $1.isNaN : $0 == $1 }
            #expect(same, "width \(width) on \(policy)")
        }
    }

    @Test func theRestOfTheCNNFamily() async throws {
        let x = Tensor(shape: [1, 2, 1, 2], scalars: [-2, 3, -6, 6] as [Float])
        #expect(try await x.leakyRelu(alpha: 0.5).shapedArray(of: Float.self).scalars == [-1, 3, -3, 6])
        // hardSigmoid(x) = clamp(x/6 + 1/2, 0, 1): 1/6 at -2, 1 at 3, 0 at -6, 1 at 6.
        let swish = try await x.hardSwish().shapedArray(of: Float.self).scalars
        #expect(zip(swish, [-2.0 / 6, 3, 0, 6] as [Float]).allSatisfy { Swift.abs($0 - $1) <= 1e-6 })
        let slopes = Tensor(shape: [2, 1, 1], scalars: [0.5, 0.25] as [Float])
        #expect(try await x.prelu(slope: slopes).shapedArray(of: Float.self).scalars == [-1, 3, -1.5, 6])
        // Channel 0 standardized with mean 1 and variance 4, channel 1 with mean 0 and variance 1.
        let normalized = x.batchNormalized(
            mean: Tensor([1, 0] as [Float]), variance: Tensor([4, 1] as [Float]), scale: Tensor([2, 1] as [Float]),
            offset: Tensor([0, 1] as [Float]), epsilon: 0)
        #expect(try await normalized.shapedArray(of: Float.self).scalars == [-3, 2, -5, 7])
        // Each plane of two values standardized: -1 and 1, then scaled by 1 and 2.
        let instance = x.instanceNormalized(
            scale: Tensor([1, 2] as [Float]), offset: Tensor([0, 0] as [Float]), epsilon: 0)
        #expect(try await instance.shapedArray(of: Float.self).scalars == [-1, 1, -2, 2])
        // Four channels of one pixel become a 2x2 block, and back.
        let depth = Tensor(shape: [1, 4, 1, 1], scalars: [1, 2, 3, 4] as [Float])
        let block = depth.depthToSpace(blockSize: 2)
        #expect(block.shape == [1, 1, 2, 2])
        #expect(try await block.shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        #expect(try await block.spaceToDepth(blockSize: 2).shapedArray(of: Float.self).scalars == [1, 2, 3, 4])
        #expect(depth.depthToSpace(blockSize: 3).error?.kind == .invalidArgument)
        #expect(depth.depthToSpace(blockSize: Int.max).error?.kind == .invalidArgument)
        #expect(
            x.batchNormalized(
                mean: Tensor([1] as [Float]), variance: Tensor([1] as [Float]),
                scale: Tensor([1] as [Float]), offset: Tensor([1] as [Float])
            ).error?.kind == .shapeMismatch)
    }

    @Test func aHugeTransposedStrideIsAnErrorWhenRun() async {
        // (2 - 1)·stride fits an Int and the padding crops the result to 4, but spreading the two
        // inputs by the stride does not fit: an error when the decomposition is built, not a trap.
        let x = Tensor(zeros: [1, 1, 2, 1], scalarType: Float.self)
        let crop = (Int.max - 10) / 2
        let t = x.transposedConvolution(
            weight: Tensor(zeros: [1, 1, 3, 1], scalarType: Float.self), strides: [Int.max - 10, 1],
            padding: [(crop, crop), (0, 0)])
        #expect(t.error == nil && t.shape == [1, 1, 4, 1])
        await #expect(throws: TensorError.self) { _ = try await t.shapedArray(of: Float.self) }
    }

    @Test func badGeometryIsATypedError() {
        let x = Tensor(zeros: [1, 4, 5, 5], scalarType: Float.self)
        let w = Tensor(zeros: [2, 4, 3, 3], scalarType: Float.self)
        // A weight whose channels do not match, groups that do not divide them.
        #expect(
            x.convolution(weight: Tensor(zeros: [2, 3, 3, 3], scalarType: Float.self)).error?.kind == .shapeMismatch)
        #expect(x.convolution(weight: w, groupCount: 3).error?.kind == .shapeMismatch)
        #expect(x.convolution(weight: w, groupCount: 0).error?.kind == .shapeMismatch)
        // Strides and dilations that are not positive, or one per spatial axis.
        #expect(x.convolution(weight: w, strides: [0, 1]).error?.kind == .invalidArgument)
        #expect(x.convolution(weight: w, dilations: [1]).error?.kind == .invalidArgument)
        // A kernel larger than the padded input; a bias of the wrong length.
        #expect(
            x.convolution(weight: Tensor(zeros: [2, 4, 7, 7], scalarType: Float.self)).error?.kind == .invalidArgument)
        #expect(
            x.convolution(weight: w, bias: Tensor(zeros: [3], scalarType: Float.self)).error?.kind == .shapeMismatch)
        // Not an image, integer data, mismatched types.
        #expect(Tensor(zeros: [4, 5], scalarType: Float.self).convolution(weight: w).error?.kind == .shapeMismatch)
        #expect(
            Tensor(zeros: [1, 4, 5, 5], scalarType: Int32.self)
                .convolution(weight: Tensor(zeros: [2, 4, 3, 3], scalarType: Int32.self)).error?.kind
                == .scalarTypeMismatch)
        // Sizes at the edge of Int: overflow is an error, not a trap.
        #expect(x.convolution(weight: w, dilations: [Int.max, 1]).error != nil)
        #expect(x.convolution(weight: w, padding: .symmetric([Int.max, 0])).error?.kind == .tooLarge)
        #expect(x.convolution(weight: w, strides: [Int.max, Int.max], padding: .same).error == nil)
        #expect(x.maxPool(kernelSize: [Int.max, 1]).error != nil)
        #expect(x.maxPool(kernelSize: [2, 2], padding: .symmetric([2, 0])).error?.kind == .invalidArgument)
        #expect(x.averagePool(kernelSize: [2]).error?.kind == .shapeMismatch)
        // Transposed: output padding must stay below the stride.
        let t = x.transposedConvolution(
            weight: Tensor(zeros: [4, 2, 3, 3], scalarType: Float.self), outputPadding: [1, 1])
        #expect(t.error?.kind == .invalidArgument)
        #expect(
            x.transposedConvolution(
                weight: Tensor(zeros: [4, 2, 3, 3], scalarType: Float.self), strides: [Int.max, 1]
            )
            .error?.kind == .tooLarge)
    }
}
