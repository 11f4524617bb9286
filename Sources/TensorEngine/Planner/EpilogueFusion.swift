/// Activations fused into the epilogue of the convolution they read, for every graph the planner
/// sees: a ReLU whose operand is a convolution read by nothing else becomes one step, the
/// convolution with its results bounded as its kernel stores them (``OutputClamp/relu``), so no
/// pass reads the convolution's result again. The ONNX importer fuses `Conv → Relu` (and `Clip`)
/// as it imports (`ONNXActivationFusion`); this pass gives the same to graphs recorded through the
/// Tensor API (`x.convolution(weight:bias:).relu()`) and to Core ML programs.
///
/// Only the ReLU, whose bound is part of the op: a plan is cached by the graph's structure, not
/// by its constants' values, so a bound read from a constant operand (a `clamped(to:)`'s scalars)
/// could not be baked into a cached step.
///
/// The step keeps the bound (``PlanStep/epilogue``) and the convolution's position among its
/// absorbed nodes; its kernel is that node's own convolution, bounded, taken from whichever
/// graph the plan runs on (``kernel(convolution:clamp:)``), as every other step runs its node's
/// own op.
enum EpilogueFusion {
    /// The fused steps of `graph`, by the ReLU node each replaces.
    static func candidates(for graph: PendingGraph) -> NodeMap<Planner.Candidate> {
        var fused = NodeMap<Planner.Candidate>()
        for node in graph.nodes where node.op.kind == .relu && !graph.isSource(node) {
            guard node.inputs.count == 1, let convolution = node.inputs.first,
                convolution.op.kind == .convolution, !graph.isSource(convolution),
                graph.uses(of: convolution.id) == 1, convolution.signature == node.signature,
                node.signature.scalarType == .float32 || node.signature.scalarType == .float16,
                let kernel = kernel(convolution: convolution, clamp: .relu)
            else { continue }
            fused[node.id] = Planner.Candidate(
                node: node, kernel: kernel, operands: Array(convolution.inputs), absorbed: [convolution],
                epilogue: .relu)
        }
        return fused
    }

    /// The kernel of a fused step: `convolution`'s own op with its results bounded by `clamp`;
    /// `nil` when the node is not a convolution without a bound.
    static func kernel(convolution: Node, clamp: OutputClamp) -> Kernel? {
        guard convolution.op.kind == .convolution, case .convolution(let geometry) = convolution.op.attributes,
            geometry.clamp == nil
        else { return nil }
        return .op(.convolution(geometry.clamped(clamp)))
    }
}
