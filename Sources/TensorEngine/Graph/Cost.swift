/// The work an op or a plan does, in units a device profile can turn into time.
///
/// One `Cost` type serves the planner, `tensorbench` (GFLOP/s and GB/s columns) and the plan dumps.
/// Costs add up, so a fused region or a whole plan is the sum of its parts.
public struct Cost: Sendable, Hashable, Codable {
    /// Floating-point operations (a fused multiply-add counts as two).
    public var flops: Double
    /// Bytes read from the operands' memory.
    public var bytesRead: Double
    /// Bytes written to the result's memory.
    public var bytesWritten: Double
    /// Kernel launches (or loop nests on the CPU).
    public var launches: Double
    /// Bytes copied between memory spaces (host ↔ device).
    public var transferBytes: Double
    /// Independent lines the op works along: the rows of a softmax or layer norm, the outputs of
    /// a reduction; zero for other ops. Device kernels that give each line a work-group pay a
    /// fixed cost per line, which dominates when lines are short.
    public var lines: Double

    /// Creates a cost.
    public init(flops: Double = 0, bytesRead: Double = 0, bytesWritten: Double = 0, launches: Double = 0, transferBytes: Double = 0, lines: Double = 0) {
        self.flops = flops
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.launches = launches
        self.transferBytes = transferBytes
        self.lines = lines
    }

    /// No work.
    public static let zero = Cost()

    /// Bytes moved to and from memory.
    public var bytesMoved: Double { bytesRead + bytesWritten }

    /// The sum of two costs.
    public static func + (a: Cost, b: Cost) -> Cost {
        Cost(
            flops: a.flops + b.flops, bytesRead: a.bytesRead + b.bytesRead, bytesWritten: a.bytesWritten + b.bytesWritten,
            launches: a.launches + b.launches, transferBytes: a.transferBytes + b.transferBytes, lines: a.lines + b.lines)
    }

    /// Adds a cost in place.
    public static func += (a: inout Cost, b: Cost) { a = a + b }
}

extension Op {
    /// The op's cost from its operand and result signatures: the cost formula of the op table.
    ///
    /// Views cost nothing. Bytes count each operand and the result once (the ideal traffic a
    /// bandwidth-bound kernel approaches); FLOPs follow the usual conventions (2·m·n·k for matmul).
    func cost(inputs: [TensorSignature], output: TensorSignature) -> Cost {
        let outputElements = Double(output.elementCount)
        let read = Double(inputs.reduce(0) { $0 + $1.byteCount })
        let written = Double(output.byteCount)
        func streaming(_ flopsPerElement: Double, elements: Double) -> Cost {
            Cost(flops: flopsPerElement * elements, bytesRead: read, bytesWritten: written, launches: 1)
        }
        switch self {
        case .constant, .reshape, .permute, .broadcast, .slice:
            return .zero
        case .unary(let op):
            return streaming(op.flopsPerElement, elements: outputElements)
        case .binary(let op):
            return streaming(op.flopsPerElement, elements: outputElements)
        case .select, .cast, .contiguous, .pad, .concat:
            return streaming(0, elements: outputElements)
        case .gather:
            // Only the gathered slices are read (an embedding lookup touches a few rows of a large
            // table), besides the indices.
            let indexBytes = Double(inputs.dropFirst().reduce(0) { $0 + $1.byteCount })
            return Cost(bytesRead: written + indexBytes, bytesWritten: written, launches: 1)
        case .reduce, .argReduce:
            var cost = streaming(1, elements: Double(inputs[0].elementCount))
            cost.lines = outputElements
            return cost
        case .cumulativeSum:
            return streaming(1, elements: outputElements)
        case .topK:
            let n = Double(inputs[0].shape.last ?? 1)
            return streaming(Swift.max(1, n.squareRoot()), elements: Double(inputs[0].elementCount))
        case .softmax(let axis), .logSoftmax(let axis):
            var cost = streaming(14, elements: outputElements)
            cost.lines = Self.lines(of: output, along: axis)
            return cost
        case .layerNorm(let axis, _):
            var cost = streaming(8, elements: outputElements)
            cost.lines = Self.lines(of: output, along: axis)
            return cost
        case .matmul:
            let k = Double(inputs[0].shape.last ?? 0)
            return streaming(2 * k, elements: outputElements)
        }
    }

    /// The number of lines along `axis`: elements / extent (zero when the axis is empty).
    static func lines(of signature: TensorSignature, along axis: Int) -> Double {
        let shape = signature.shape
        guard shape.indices.contains(axis), shape[axis] > 0 else { return 0 }
        return Double(signature.elementCount / shape[axis])
    }
}
