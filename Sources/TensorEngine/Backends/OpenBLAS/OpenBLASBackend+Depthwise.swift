import CIntrinsics

/// Depthwise convolutions over 2-D planes, the form MobileNet-style layers take. On a CPU with
/// AVX-512, 3 × 3 and 5 × 5 filters at stride 1 or 2 go to the C kernel of `windows.h`
/// (``te_depthwise_plane_avx512``): blocks of four output rows × 32 columns whose sums stay in
/// registers, each input vector loaded once per column tap for every row of the block (at stride
/// 2, 32 columns loaded give two taps' 16 lanes, even and odd), the planes read in place (masked
/// loads at the edges), and the bias, a fused residual and the activation's bound applied as each
/// result is stored.
///
/// The other shapes with unit column stride take the striped Swift kernel: 64 outputs of a row at
/// a time, as four strips of 16 whose sums stay in registers across every tap (four independent
/// chains of fused multiply-adds, where one strip's taps would wait on each other).
///
/// Each worker of the striped kernel copies an input plane into a scratch plane whose rows carry
/// the left and right padding as zeros, so that every chunk reads whole vectors and no column is
/// an edge; rows above and below the input are taps that are skipped. Each sum starts from the
/// plane's bias (or 0), so the output is written once; a fused activation's clamp bounds each row
/// once it is done.
extension OpenBLASBackend {
    typealias DepthwiseStrip = SIMD16<Float>

    /// Whether ``stripedDepthwise(_:_:_:_:planes:channels:multiplier:)`` computes the shape: a
    /// 2-D window (one depth step) stepping one column at a time.
    static func stripsDepthwise(_ shape: WindowShape3D) -> Bool {
        shape.isPlanar && shape.strides[2] == 1 && shape.output[2] > 0
    }

    /// Whether ``depthwisePlanes(_:_:_:_:_:_:planes:channels:multiplier:clamp:)`` computes the
    /// shape: a 3 × 3 or 5 × 5 window over 2-D planes at stride 1 or 2 (the same on both axes)
    /// without dilation, on a CPU whose AVX-512 code the backend runs.
    static func takesDepthwisePlanes(_ shape: WindowShape3D) -> Bool {
        HostProducts.kernel == .avx512 && shape.isPlanar && shape.strides[1] == shape.strides[2]
            && shape.dilations == SIMD3(1, 1, 1)
            && te_depthwise_takes(shape.kernel[1], shape.kernel[2], shape.strides[2]) != 0
    }

    /// Every output plane by ``te_depthwise_plane_avx512``, the planes shared among the workers:
    /// each result the bias plus its taps, plus the residual's value (contiguous, the output's
    /// shape), then bounded by `clamp`.
    static func depthwisePlanes(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, _ bias: UnsafePointer<Float>?,
        _ residual: UnsafePointer<Float>?, _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D,
        planes: Int, channels: Int, multiplier: Int, clamp: OutputClamp?
    ) {
        let outChannels = channels * multiplier
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: shape.kernelCount)
        withBounds(clamp) { bounds in
            Parallel.forEachRange(planes, parts: parts) { range in
                for plane in range {
                    let (n, m) = plane.quotientAndRemainder(dividingBy: outChannels)
                    let at = plane * shape.outputCount
                    te_depthwise_plane_avx512(
                        x + (n * channels + m / multiplier) * shape.inputCount, shape.input[1], shape.input[2],
                        out + at, residual.map { $0 + at }, shape.output[1], shape.output[2],
                        w + m * shape.kernelCount, shape.kernel[1], shape.kernel[2], shape.strides[2], shape.before[1],
                        shape.before[2], bias?[m] ?? 0, bounds)
                }
            }
        }
    }

    static func stripedDepthwise(
        _ x: UnsafePointer<Float>, _ w: UnsafePointer<Float>, _ bias: UnsafePointer<Float>?,
        _ out: UnsafeMutablePointer<Float>, _ shape: WindowShape3D, planes: Int, channels: Int, multiplier: Int,
        clamp: OutputClamp?
    ) {
        let outChannels = channels * multiplier
        let (rows, columns) = (shape.input[1], shape.input[2])
        let (outRows, outColumns) = (shape.output[1], shape.output[2])
        let kernelColumns = shape.kernel[2]
        // Output column o, tap t reads scratch column o + t·dilation: the input's column
        // o - before + t·dilation, shifted right by `before`. The last chunk of 64 reads as far as
        // a whole one would.
        let width = (outColumns + 63) / 64 * 64 + (kernelColumns - 1) * shape.dilations[2]
        let parts = Parallel.workerCount(forElements: planes * shape.outputCount, costPerElement: shape.kernelCount)
        Parallel.forEachRange(planes, parts: parts) { range in
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: rows * width)
            scratch.initialize(repeating: 0, count: rows * width)
            let tail = UnsafeMutablePointer<Float>.allocate(capacity: 64)
            tail.initialize(repeating: 0, count: 64)
            defer {
                scratch.deallocate()
                tail.deallocate()
            }
            // The input's columns land `before` columns into a scratch row; the rest stays zero.
            let left = shape.before[2]
            for plane in range {
                let (n, m) = plane.quotientAndRemainder(dividingBy: outChannels)
                let input = x + (n * channels + m / multiplier) * shape.inputCount
                for row in 0..<rows { (scratch + row * width + left).update(from: input + row * columns, count: columns) }
                let filter = w + m * shape.kernelCount
                let start = DepthwiseStrip(repeating: bias?[m] ?? 0)
                let result = out + plane * shape.outputCount
                for oh in 0..<outRows {
                    let target = result + oh &* outColumns
                    var column = 0
                    while column &+ 64 <= outColumns {
                        Self.sumWide(target + column, start, scratch + column, width: width, oh: oh, shape, filter)
                        column &+= 64
                    }
                    if column < outColumns {
                        // The last columns through a whole chunk of their own (the scratch row
                        // reads as far), copied out.
                        Self.sumWide(tail, start, scratch + column, width: width, oh: oh, shape, filter)
                        (target + column).update(from: tail, count: outColumns &- column)
                    }
                    // A fused activation bounds the row while it is in L1 (inside the sums' loop,
                    // its bounds cost the kernel its inlining).
                    clamp?.apply(to: target, count: outColumns)
                }
            }
        }
    }

    /// 64 columns of an output row at `target`: `start` (the bias) plus every tap, summed in
    /// registers and stored once.
    @inline(__always)
    private static func sumWide(
        _ target: UnsafeMutablePointer<Float>, _ start: DepthwiseStrip, _ scratch: UnsafeMutablePointer<Float>,
        width: Int, oh: Int, _ shape: WindowShape3D, _ filter: UnsafePointer<Float>
    ) {
        let stride = MemoryLayout<DepthwiseStrip>.stride
        let out = UnsafeMutableRawPointer(target)
        var (sum0, sum1, sum2, sum3) = (start, start, start, start)
        let step = shape.dilations[2] &* MemoryLayout<Float>.stride
        for kh in 0..<shape.kernel[1] {
            let ih = oh &* shape.strides[1] &- shape.before[1] &+ kh &* shape.dilations[1]
            guard ih >= 0, ih < shape.input[1] else { continue }
            let line = UnsafeRawPointer(scratch + ih &* width)
            let weights = filter + kh &* shape.kernel[2]
            for kw in 0..<shape.kernel[2] {
                let weight = DepthwiseStrip(repeating: weights[kw])
                let at = step &* kw
                sum0 = sum0.addingProduct(line.loadUnaligned(fromByteOffset: at, as: DepthwiseStrip.self), weight)
                sum1 = sum1.addingProduct(line.loadUnaligned(fromByteOffset: at &+ stride, as: DepthwiseStrip.self), weight)
                sum2 = sum2.addingProduct(
                    line.loadUnaligned(fromByteOffset: at &+ 2 &* stride, as: DepthwiseStrip.self), weight)
                sum3 = sum3.addingProduct(
                    line.loadUnaligned(fromByteOffset: at &+ 3 &* stride, as: DepthwiseStrip.self), weight)
            }
        }
        out.storeBytes(of: sum0, as: DepthwiseStrip.self)
        out.storeBytes(of: sum1, toByteOffset: stride, as: DepthwiseStrip.self)
        out.storeBytes(of: sum2, toByteOffset: 2 &* stride, as: DepthwiseStrip.self)
        out.storeBytes(of: sum3, toByteOffset: 3 &* stride, as: DepthwiseStrip.self)
    }
}
