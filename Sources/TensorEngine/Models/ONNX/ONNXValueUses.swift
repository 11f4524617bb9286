/// Which node produces each value of a graph, and how many inputs of nodes read it: what the
/// importer's fusions check before they merge one node into another (a result read by the fused
/// node alone can be left uncomputed).
struct ONNXValueUses {
    /// The number of node inputs that name each value.
    private(set) var readers: [String: Int] = [:]
    /// The position, in the sorted nodes, of the node that outputs each value.
    private(set) var producer: [String: Int] = [:]

    init(_ nodes: [ONNXNodeProto]) {
        for (index, node) in nodes.enumerated() {
            for input in node.inputs where !input.isEmpty { readers[input, default: 0] += 1 }
            for output in node.outputs where !output.isEmpty { producer[output] = index }
        }
    }

    /// The producer of `value` when the one node input that reads it is the fused node's, and it
    /// is no graph output.
    func soleProducer(of value: String, graphOutputs: Set<String>) -> Int? {
        guard !value.isEmpty, !graphOutputs.contains(value), readers[value] == 1 else { return nil }
        return producer[value]
    }

    /// The `Conv` node (its position in `nodes`) whose result `value` is, read by the fused node
    /// alone and no graph output: produced by the `Conv` itself or by a node that becomes it
    /// (`convolutionResults`: such a node's position to the convolution's).
    func soleConvolution(
        of value: String, in nodes: [ONNXNodeProto], graphOutputs: Set<String>, convolutionResults: [Int: Int]
    ) -> Int? {
        guard let source = soleProducer(of: value, graphOutputs: graphOutputs) else { return nil }
        if nodes[source].opType == "Conv", nodes[source].domain.isEmpty { return source }
        return convolutionResults[source]
    }
}
