/// How a convolution's kernel slides over the spatial axes of `[N, C, spatial...]`: one entry per
/// spatial axis in each array (the front end fills defaults, so every array has the spatial rank).
package struct ConvolutionGeometry: Sendable, Hashable {
    package var strides: [Int]
    package var dilations: [Int]
    /// Implicit zeros before and after each spatial axis (of the input; for a transposed
    /// convolution, removed from the result, as ONNX's `pads` of `ConvTranspose`).
    package var padding: [Padding]
    /// Channels split into this many independent groups (the input's and the result's channels
    /// are both multiples of it; depthwise convolutions have one input channel per group).
    package var groups: Int
    /// Extra extent at the end of each axis of a transposed convolution's result; zeros for a
    /// convolution.
    package var outputPadding: [Int]

    package init(strides: [Int], dilations: [Int], padding: [Padding], groups: Int, outputPadding: [Int]) {
        self.strides = strides
        self.dilations = dilations
        self.padding = padding
        self.groups = groups
        self.outputPadding = outputPadding
    }

    var spatialRank: Int { strides.count }
}

/// How a pooling window slides over the spatial axes of `[N, C, spatial...]`.
package struct PoolingGeometry: Sendable, Hashable {
    package var kernel: [Int]
    package var strides: [Int]
    package var dilations: [Int]
    /// Padding before and after each spatial axis: never part of a maximum; part of an average's
    /// count only when ``countsPadding``.
    package var padding: [Padding]
    /// Whether the result's extents round up (a last, partial window) rather than down. A partial
    /// window's positions past the padding are never counted.
    package var ceilMode: Bool
    /// Whether an average divides by the window's positions inside the padded input (true) or
    /// only by those inside the input (false).
    package var countsPadding: Bool

    package init(
        kernel: [Int], strides: [Int], dilations: [Int], padding: [Padding], ceilMode: Bool, countsPadding: Bool
    ) {
        self.kernel = kernel
        self.strides = strides
        self.dilations = dilations
        self.padding = padding
        self.ceilMode = ceilMode
        self.countsPadding = countsPadding
    }

    var spatialRank: Int { kernel.count }
}

/// The arithmetic of sliding windows, shared by the shape rules and every backend's kernels.
enum WindowArithmetic {
    /// The number of window positions along one axis, or the rule broken: the window spans
    /// `dilation·(kernel - 1) + 1` elements of the padded input and steps by `stride`; rounding up
    /// (`ceil`) keeps a last partial window only when it starts inside the input or its leading
    /// padding (PyTorch's and ONNX's rule).
    static func windowCount(
        extent: Int, kernel: Int, stride: Int, dilation: Int, padding: Padding, ceil: Bool
    ) throws(RuleViolation) -> Int {
        guard kernel > 0, stride > 0, dilation > 0, padding.before >= 0, padding.after >= 0 else {
            throw RuleViolation(
                .invalidArgument,
                "kernel \(kernel), stride \(stride) and dilation \(dilation) must be positive and padding "
                    + "(\(padding.before), \(padding.after)) non-negative")
        }
        let (span, spanOverflow) = dilation.multipliedReportingOverflow(by: kernel - 1)
        guard !spanOverflow, let padded = Tensor.checkedSum([extent, padding.before, padding.after]) else {
            throw RuleViolation(.tooLarge, "the window or the padded extent overflows an Int")
        }
        let room = padded - span - 1
        guard room >= 0 else {
            throw RuleViolation(
                .invalidArgument,
                "a window of \(kernel) (dilation \(dilation)) does not fit the padded extent \(padded)")
        }
        var count = room / stride + 1
        if ceil, room % stride != 0 {
            count += 1
            if (count - 1) * stride >= extent + padding.before { count -= 1 }
        }
        return count
    }

    /// The first input position of window `index` and the positions it reads, as a range of
    /// window taps `0..<kernel` whose input position `start + tap·dilation` lies in `0..<extent`.
    @inline(__always)
    static func taps(
        window index: Int, stride: Int, before: Int, dilation: Int, kernel: Int, extent: Int
    ) -> (start: Int, taps: Range<Int>) {
        let start = index * stride - before
        // The first tap at or after position 0 and the last one before `extent`.
        let first = start >= 0 ? 0 : (-start + dilation - 1) / dilation
        let last = extent - 1 - start < 0 ? -1 : (extent - 1 - start) / dilation
        let lower = Swift.min(first, kernel)
        return (start, lower..<Swift.max(lower, Swift.min(kernel, last + 1)))
    }

    /// How many taps of window `index` an average divides by: those inside the padded input
    /// (`countsPadding`) or inside the input.
    static func averageCount(
        window index: Int, axis: Int, geometry: PoolingGeometry, extent: Int
    ) -> Int {
        let stride = geometry.strides[axis]
        let dilation = geometry.dilations[axis]
        let kernel = geometry.kernel[axis]
        let padding = geometry.padding[axis]
        if geometry.countsPadding {
            let padded = extent + padding.before + padding.after
            return taps(window: index, stride: stride, before: 0, dilation: dilation, kernel: kernel, extent: padded)
                .taps.count
        }
        return taps(
            window: index, stride: stride, before: padding.before, dilation: dilation, kernel: kernel, extent: extent
        ).taps.count
    }
}
