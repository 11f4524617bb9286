/// A sliding window's sizes on up to three spatial axes, padded in front to exactly three
/// (`depth`, `height`, `width`; a missing axis has extent 1 and a 1-tap window): the CPU
/// and OpenCL kernels' view of every 1-, 2- and 3-D convolution and pooling.
struct WindowShape3D {
    var input: SIMD3<Int>
    var kernel: SIMD3<Int>
    var output: SIMD3<Int>
    var strides: SIMD3<Int>
    var dilations: SIMD3<Int>
    var before: SIMD3<Int>

    /// The kernels handle at most three spatial axes.
    static let maxSpatialRank = 3

    init(input: [Int], kernel: [Int], output: [Int], strides: [Int], dilations: [Int], padding: [Padding]) {
        func padded(_ values: [Int], _ fill: Int) -> SIMD3<Int> {
            let full = Array(repeating: fill, count: Self.maxSpatialRank - values.count) + values
            return SIMD3(full[0], full[1], full[2])
        }
        self.input = padded(input, 1)
        self.kernel = padded(kernel, 1)
        self.output = padded(output, 1)
        self.strides = padded(strides, 1)
        self.dilations = padded(dilations, 1)
        self.before = padded(padding.map(\.before), 0)
    }

    var inputCount: Int { input[0] * input[1] * input[2] }
    /// Whether the window is 2-D: one depth step over planes of depth 1, no depth padding.
    var isPlanar: Bool { kernel[0] == 1 && input[0] == 1 && output[0] == 1 && before[0] == 0 }
    var outputCount: Int { output[0] * output[1] * output[2] }
    /// Whether output position p is the window over input position p alone: one tap, stride 1,
    /// no padding (a pointwise convolution reads its input's planes as they are).
    var readsInputAsPlanes: Bool {
        kernelCount == 1 && strides == SIMD3(1, 1, 1) && before == SIMD3(0, 0, 0) && input == output
    }
    var kernelCount: Int { kernel[0] * kernel[1] * kernel[2] }

    /// The window taps along `axis` of output position `index` that land inside the input, and
    /// the input position of tap 0.
    @inline(__always)
    func taps(_ axis: Int, _ index: Int) -> (start: Int, taps: Range<Int>) {
        WindowArithmetic.taps(
            window: index, stride: strides[axis], before: before[axis], dilation: dilations[axis],
            kernel: kernel[axis], extent: input[axis])
    }

    /// The output positions along `axis` whose tap `tap` lands inside the input.
    @inline(__always)
    func validOutputs(_ axis: Int, tap: Int) -> Range<Int> {
        // Input position o·stride - before + tap·dilation in 0..<extent.
        let offset = tap * dilations[axis] - before[axis]
        let stride = strides[axis]
        let low = offset >= 0 ? 0 : (-offset + stride - 1) / stride
        let highExclusive = input[axis] - offset <= 0 ? 0 : (input[axis] - offset - 1) / stride + 1
        let upper = Swift.min(output[axis], highExclusive)
        return Swift.min(low, upper)..<upper
    }
}
