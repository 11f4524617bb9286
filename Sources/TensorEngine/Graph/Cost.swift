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
    /// Recorded operations the work stands for: one per op, every op of a fused region. The
    /// engine's bookkeeping (recording, the graph walk, planning, the executor) is paid per
    /// operation, whatever the kernels cost: what a chain of a thousand tiny ops spends its time on.
    public var operations: Double

    /// Creates a cost.
    public init(
        flops: Double = 0, bytesRead: Double = 0, bytesWritten: Double = 0, launches: Double = 0,
        transferBytes: Double = 0, lines: Double = 0, operations: Double = 0
    ) {
        self.flops = flops
        self.bytesRead = bytesRead
        self.bytesWritten = bytesWritten
        self.launches = launches
        self.transferBytes = transferBytes
        self.lines = lines
        self.operations = operations
    }

    /// No work.
    public static let zero = Cost()

    /// Bytes moved to and from memory.
    public var bytesMoved: Double { bytesRead + bytesWritten }

    /// The sum of two costs.
    public static func + (a: Cost, b: Cost) -> Cost {
        Cost(
            flops: a.flops + b.flops, bytesRead: a.bytesRead + b.bytesRead,
            bytesWritten: a.bytesWritten + b.bytesWritten,
            launches: a.launches + b.launches, transferBytes: a.transferBytes + b.transferBytes,
            lines: a.lines + b.lines, operations: a.operations + b.operations)
    }

    /// Adds a cost in place.
    public static func += (a: inout Cost, b: Cost) { a = a + b }
}

/// Which row of a device profile prices a cost: kinds of work that devices do at different rates.
public enum CostClass: String, Sendable, Hashable, CaseIterable, Codable, CodingKeyRepresentable {
    /// Streams of elementwise arithmetic (single ops and fused regions).
    case elementwise
    /// Reductions along axes.
    case reduction
    /// Work along whole lines: softmax, layer norm, scans, top-k.
    case lineWise
    /// Matrix products, at a rate that grows with their size.
    case matmul
    /// Matrix products with fewer than 16 rows or columns: matrix·vector work, bound by reading
    /// the matrix.
    case matrixVector
    /// Data movement: strided copies, transposes, padding.
    case movement
    /// Data movement whose reads and writes come in runs of a cache line or more (a head split, a
    /// row gather, a concatenation of long rows).
    case runMovement
    /// Sliding windows that do not lower to a matrix product: depthwise convolutions and those
    /// with few channels per group, whose taps multiply and add along each plane.
    case window
    /// Convolutions of 1 × 1 windows (pointwise, one group): a matrix product whose other operand
    /// is the activations, packed again at every call, and whose output channels are often
    /// fewer than a product's tiles want. A 256 → 64 convolution on 56 × 56 ran at half the rate
    /// of a product of its FLOPs.
    case pointwise
}

/// An op's cost and the profile row that prices it.
package struct OpCost: Sendable, Hashable {
    var cost: Cost
    var costClass: CostClass

    static let free = OpCost(cost: .zero, costClass: .elementwise)
}

/// What a cost rule knows of an operand: its signature, and its layout when the planner can tell.
package struct CostOperand: Sendable {
    let signature: TensorSignature
    let layout: Layout?
}

/// The cost formulas of the op table, one per kind of work.
///
/// Bytes count each operand and the result once (the ideal traffic a bandwidth-bound kernel
/// approaches); FLOPs follow the usual conventions (2·m·n·k for a matrix product).
enum CostRules {
    /// Bytes of consecutive memory from which data movement counts as moving runs: one cache line.
    static let runBytes = 64

    /// Views and sources: nothing.
    static let free: CostRule = { _, _, _ in .free }

    /// `flopsPerElement` per result element, every operand read once, one launch.
    static func streaming(
        _ op: Op, _ inputs: [CostOperand], _ output: TensorSignature, flopsPerElement: Double,
        costClass: CostClass
    ) -> OpCost {
        let read = Double(inputs.reduce(0) { $0 + $1.signature.byteCount })
        let cost = Cost(
            flops: flopsPerElement * Double(output.elementCount), bytesRead: read,
            bytesWritten: Double(output.byteCount), launches: 1)
        return OpCost(cost: cost, costClass: costClass)
    }

    /// An elementwise op: its expression's FLOPs per element.
    static let elementwise: CostRule = { op, inputs, output in
        streaming(op, inputs, output, flopsPerElement: op.elementwiseExpression.flops, costClass: .elementwise)
    }

    /// A reduction: one FLOP per element read, a line per output.
    static func reduction(flopsPerElement: Double) -> CostRule {
        { op, inputs, output in
            var result = streaming(op, inputs, output, flopsPerElement: 0, costClass: .reduction)
            result.cost.flops = flopsPerElement * Double(inputs.first?.signature.elementCount ?? 0)
            result.cost.lines = Double(output.elementCount)
            return result
        }
    }

    /// Work along the lines of the op's axis, `flopsPerElement` per element.
    static func lines(flopsPerElement: Double) -> CostRule {
        { op, inputs, output in
            var result = streaming(op, inputs, output, flopsPerElement: flopsPerElement, costClass: .lineWise)
            result.cost.lines = lineCount(of: output, along: op.axis)
            return result
        }
    }

    /// A top-k selection: about √n comparisons per element of lines of n.
    static let topK: CostRule = { op, inputs, output in
        let input = inputs.first?.signature ?? output
        let n = Double(input.shape.last ?? 1)
        var result = streaming(op, inputs, output, flopsPerElement: 0, costClass: .lineWise)
        result.cost.flops = Swift.max(1, n.squareRoot()) * Double(input.elementCount)
        return result
    }

    /// `[..., m, k] · [..., k, n]`: 2·k FLOPs per output; matrix·vector work when m or n is small
    /// (under 16), whose rate grows with its FLOPs, that is with m or n, for a given matrix.
    static let matmul: CostRule = { op, inputs, output in
        let k = Double(inputs.first?.signature.shape.last ?? 0)
        let shape = output.shape
        let skinny = shape.count >= 2 && Swift.min(shape[shape.count - 2], shape[shape.count - 1]) < 16
        return streaming(op, inputs, output, flopsPerElement: 2 * k, costClass: skinny ? .matrixVector : .matmul)
    }

    /// Data movement that copies every result element once; runs of at least ``runBytes`` (as
    /// `runLength` measures them, in elements) price it at the run rate.
    static func movement(runLength: @escaping @Sendable (Op, [CostOperand], TensorSignature) -> Int?) -> CostRule {
        { op, inputs, output in
            let runs = runLength(op, inputs, output).map { $0 * output.scalarType.byteCount >= runBytes } ?? false
            return streaming(op, inputs, output, flopsPerElement: 0, costClass: runs ? .runMovement : .movement)
        }
    }

    /// An append writes only what it appends when the first operand is a prefix with room after
    /// it (``AppendGeometry``); otherwise it copies everything into a new, larger buffer.
    static let append: CostRule = { op, inputs, output in
        guard let first = inputs.first, let layout = first.layout,
            let geometry = AppendGeometry(
                axis: op.axis, first: layout, appended: output.shape[op.axis] - first.signature.shape[op.axis]),
            geometry.extendsFirst
        else {
            return streaming(op, inputs, output, flopsPerElement: 0, costClass: .movement)
        }
        let appended = Double(inputs.dropFirst().reduce(0) { $0 + $1.signature.byteCount })
        return OpCost(cost: Cost(bytesRead: appended, bytesWritten: appended, launches: 1), costClass: .movement)
    }

    /// A gather reads only the slices it picks (an embedding lookup touches a few rows of a large
    /// table), besides the indices.
    static let gather: CostRule = { op, inputs, output in
        let indexBytes = Double(inputs.dropFirst().reduce(0) { $0 + $1.signature.byteCount })
        let written = Double(output.byteCount)
        let inner = inputs.first.map { $0.signature.shape.dropFirst(op.axis + 1).reduce(1, *) } ?? 1
        let runs = inner * output.scalarType.byteCount >= runBytes
        return OpCost(
            cost: Cost(bytesRead: written + indexBytes, bytesWritten: written, launches: 1),
            costClass: runs ? .runMovement : .movement)
    }

    /// The number of lines along `axis`: elements / extent (zero when the axis is empty).
    static func lineCount(of signature: TensorSignature, along axis: Int) -> Double {
        let shape = signature.shape
        guard shape.indices.contains(axis), shape[axis] > 0 else { return 0 }
        return Double(signature.elementCount / shape[axis])
    }
}
