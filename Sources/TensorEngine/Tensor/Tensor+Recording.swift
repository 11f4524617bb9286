import Foundation

extension Tensor {
    /// The largest tensor, in bytes, the engine will record: the machine's physical memory.
    static let maximumByteCount = Int(clamping: ProcessInfo.processInfo.physicalMemory)

    /// Records an op on operands, or returns the error that prevents it.
    ///
    /// - Parameters:
    ///   - name: the op's user-facing name, for errors raised before the op is built.
    ///   - operands: the inputs; the first error among them is passed on unchanged.
    ///   - location: the user's call site.
    ///   - makeOp: builds the normalised op from the operand signatures, or throws the rule broken.
    package static func record(
        _ name: @autoclosure () -> String, _ operands: [Tensor], at location: SourceLocation?,
        _ makeOp: ([TensorSignature]) throws(RuleViolation) -> Op
    ) -> Tensor {
        // A tensor holds either a node or an error: the first error among the operands is passed on.
        var nodes: [Node] = []
        nodes.reserveCapacity(operands.count)
        var signatures: [TensorSignature] = []
        signatures.reserveCapacity(operands.count)
        for operand in operands {
            guard let node = operand.node else { return operand }
            nodes.append(node)
            signatures.append(node.signature)
        }
        do {
            let op = try makeOp(signatures)
            return try recorded(op, nodes, signatures, at: location)
        } catch {
            return failure(error, name(), signatures, at: location)
        }
    }

    /// Records an op whose attributes need no operand-dependent normalisation.
    package static func record(_ op: Op, _ operands: [Tensor], at location: SourceLocation?) -> Tensor {
        record(op.name, operands, at: location) { _ throws(RuleViolation) in op }
    }

    /// Records an op on two operands that hold nodes (not errors): a binary op's common case,
    /// without an array of operand tensors to build and take apart.
    static func record(_ op: Op, _ first: Node, _ second: Node, at location: SourceLocation?) -> Tensor {
        // Operands of one signature under an op whose row says the result then has it too (and
        // its size was checked with the operands'): its layout the first operand's when that is
        // row-major, as for any fresh elementwise result. Checking the rules one by one was half
        // of recording a step of a chain of scalar steps.
        let signature = first.signature
        let descriptor = op.descriptor
        if let accepted = descriptor.sameSignatureTypes, descriptor.arity.accepts(2),
            signature == second.signature, accepted.contains(signature.scalarType)
        {
            let layout =
                first.layout.isRowMajor(shape: signature.shape) ? first.layout : Layout(contiguous: signature.shape)
            return Tensor(
                node: Node(
                    op: op, operands: first, second, signature: signature, layout: layout,
                    location: location))
        }
        let signatures = [first.signature, second.signature]
        do {
            return try recorded(op, [first, second], signatures, at: location)
        } catch {
            return failure(error, op.name, signatures, at: location)
        }
    }

    /// The node of `op` on operands of these signatures, its result's signature checked.
    private static func recorded(
        _ op: Op, _ nodes: [Node], _ signatures: [TensorSignature], at location: SourceLocation?
    ) throws(RuleViolation) -> Tensor {
        let output = try op.outputSignature(for: signatures)
        try checkSize(output.shape, output.scalarType)
        return Tensor(node: Node(op: op, inputs: nodes, signature: output, location: location))
    }

    /// The tensor carrying the rule an op named `name` broke on operands of these signatures.
    private static func failure(
        _ violation: RuleViolation, _ name: String, _ signatures: [TensorSignature], at location: SourceLocation?
    ) -> Tensor {
        Tensor(
            failed: TensorError(
                violation.kind, op: name, operandShapes: signatures.map(\.shape), message: violation.message,
                location: location))
    }

    /// Throws ``TensorError/Kind/tooLarge`` for shapes whose byte size overflows or exceeds memory.
    static func checkSize(_ shape: [Int], _ type: ScalarType) throws(RuleViolation) {
        guard shape.allSatisfy({ $0 >= 0 }) else {
            throw RuleViolation(.invalidArgument, "shape \(describe(shape)) has a negative dimension")
        }
        guard let count = Shape.elementCount(shape), case let (bytes, overflow) = count.multipliedReportingOverflow(by: type.byteCount),
            !overflow, bytes <= maximumByteCount
        else {
            throw RuleViolation(.tooLarge, "shape \(describe(shape)) of \(type) is larger than this machine's memory")
        }
    }

    /// The sum of `values`, or `nil` when it overflows.
    static func checkedSum(_ values: [Int]) -> Int? {
        var total = 0
        for value in values {
            let (sum, overflow) = total.addingReportingOverflow(value)
            guard !overflow else { return nil }
            total = sum
        }
        return total
    }

    /// Normalises an axis in `-rank..<rank` to `0..<rank`.
    static func normalize(axis: Int, rank: Int) throws(RuleViolation) -> Int {
        let normalized = axis < 0 ? axis + rank : axis
        guard (0..<rank).contains(normalized) else {
            throw RuleViolation(.invalidAxis, "axis \(axis) is out of range for rank \(rank)")
        }
        return normalized
    }

    /// Normalises axes and sorts them; repeated axes are an error.
    static func normalize(axes: [Int], rank: Int) throws(RuleViolation) -> [Int] {
        var result: [Int] = []
        for axis in axes { result.append(try normalize(axis: axis, rank: rank)) }
        result.sort()
        guard Set(result).count == result.count else {
            throw RuleViolation(.invalidAxis, "axes \(axes) repeat an axis")
        }
        return result
    }
}
