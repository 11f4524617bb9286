/// How a convolution's kernel slides over the spatial axes of `[N, C, spatial...]`: one entry per
/// spatial axis in each array (the front end fills defaults, so every array has the spatial rank).
///
/// A class of constants compared by value, so that an op's attributes hold one reference: a
/// struct of several arrays would share the attribute enum's tag bits with its array pointers,
/// where LeakSanitizer no longer recognises them.
package final class ConvolutionGeometry: Sendable, Hashable {
    package let strides: [Int]
    package let dilations: [Int]
    /// Implicit zeros before and after each spatial axis (of the input; for a transposed
    /// convolution, removed from the result, as ONNX's `pads` of `ConvTranspose`).
    package let padding: [Padding]
    /// Channels split into this many independent groups (the input's and the result's channels
    /// are both multiples of it; depthwise convolutions have one input channel per group).
    package let groups: Int
    /// Extra extent at the end of each axis of a transposed convolution's result; zeros for a
    /// convolution.
    package let outputPadding: [Int]
    /// A bound applied to every result after the bias (an activation fused into the
    /// convolution's epilogue by an importer: ONNX's `Relu` or `Clip` after a `Conv`); `nil`
    /// for none. A transposed convolution's decomposition passes it to its forward convolution.
    package let clamp: OutputClamp?
    /// Whether the last operand, of the result's shape and type, is added to every result after
    /// the bias and before the ``clamp`` (a residual connection fused into the convolution's
    /// epilogue by an importer: ONNX's `Add` or `Sum` of a `Conv` and a shortcut). The operands
    /// are then `[x, w, bias?, residual]`.
    package let addsResidual: Bool

    package init(
        strides: [Int], dilations: [Int], padding: [Padding], groups: Int, outputPadding: [Int],
        clamp: OutputClamp? = nil, addsResidual: Bool = false
    ) {
        self.strides = strides
        self.dilations = dilations
        self.padding = padding
        self.groups = groups
        self.outputPadding = outputPadding
        self.clamp = clamp
        self.addsResidual = addsResidual
    }

    var spatialRank: Int { strides.count }

    /// The position of the bias among `count` operands, `nil` without one.
    package func biasIndex(operandCount count: Int) -> Int? { count > (addsResidual ? 3 : 2) ? 2 : nil }

    /// The position of the residual among `count` operands (the last), `nil` without one.
    package func residualIndex(operandCount count: Int) -> Int? { addsResidual && count > 2 ? count - 1 : nil }

    /// The same geometry with its results bounded by `clamp`.
    package func clamped(_ clamp: OutputClamp) -> ConvolutionGeometry {
        ConvolutionGeometry(
            strides: strides, dilations: dilations, padding: padding, groups: groups, outputPadding: outputPadding,
            clamp: clamp, addsResidual: addsResidual)
    }

    /// The same geometry adding a residual operand (appended last) to its results.
    package func addingResidual() -> ConvolutionGeometry {
        ConvolutionGeometry(
            strides: strides, dilations: dilations, padding: padding, groups: groups, outputPadding: outputPadding,
            clamp: clamp, addsResidual: true)
    }

    package static func == (a: ConvolutionGeometry, b: ConvolutionGeometry) -> Bool {
        a.strides == b.strides && a.dilations == b.dilations && a.padding == b.padding && a.groups == b.groups
            && a.outputPadding == b.outputPadding && a.clamp == b.clamp && a.addsResidual == b.addsResidual
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(strides)
        hasher.combine(dilations)
        hasher.combine(padding)
        hasher.combine(groups)
        hasher.combine(outputPadding)
        hasher.combine(clamp)
        hasher.combine(addsResidual)
    }
}

/// Results bounded below and above, as ONNX's `Clip` bounds them: `min(max(y, lower), upper)`
/// with a NaN kept (`upper` wins where `lower > upper`, and a zero `lower` makes `-0` into `+0`,
/// as `relu` does). `relu` is `OutputClamp(lower: 0, upper: .infinity)`.
package struct OutputClamp: Sendable, Hashable {
    package let lower: Float
    package let upper: Float

    package init(lower: Float, upper: Float) {
        self.lower = lower
        self.upper = upper
    }

    /// `max(y, 0)`: ReLU.
    package static let relu = OutputClamp(lower: 0, upper: .infinity)

    /// `y` bounded, one value (the scalar form of every backend's vector code).
    @inline(__always)
    package func apply(_ y: Float) -> Float {
        let low = y <= lower ? lower : y
        return low >= upper ? upper : low
    }

    /// `y` bounded in `Double` (the reference sums in `Double`).
    package func apply(_ y: Double) -> Double {
        let low = y <= Double(lower) ? Double(lower) : y
        return low >= Double(upper) ? Double(upper) : low
    }
}

/// How a pooling window slides over the spatial axes of `[N, C, spatial...]` (a class of
/// constants compared by value, as ``ConvolutionGeometry`` is).
package final class PoolingGeometry: Sendable, Hashable {
    package let kernel: [Int]
    package let strides: [Int]
    package let dilations: [Int]
    /// Padding before and after each spatial axis: never part of a maximum; part of an average's
    /// count only when ``countsPadding``.
    package let padding: [Padding]
    /// Whether the result's extents round up (a last, partial window) rather than down. A partial
    /// window's positions past the padding are never counted.
    package let ceilMode: Bool
    /// Whether an average divides by the window's positions inside the padded input (true) or
    /// only by those inside the input (false).
    package let countsPadding: Bool

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

    package static func == (a: PoolingGeometry, b: PoolingGeometry) -> Bool {
        a.kernel == b.kernel && a.strides == b.strides && a.dilations == b.dilations && a.padding == b.padding
            && a.ceilMode == b.ceilMode && a.countsPadding == b.countsPadding
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(kernel)
        hasher.combine(strides)
        hasher.combine(dilations)
        hasher.combine(padding)
        hasher.combine(ceilMode)
        hasher.combine(countsPadding)
    }
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
