/// Replaces calls of a model's local functions (`FunctionProto`) by the functions' bodies.
///
/// A call is a node whose domain and op type name a function. Its body's nodes are copied with
/// their values renamed (formal inputs and outputs to the call's actual ones, the rest under a
/// prefix unique to the call) and their attribute references (`ref_attr_name`) bound to the call's
/// attributes or the function's defaults. Functions may call functions; recursion is an error.
struct ONNXFunctionInliner {
    private let functions: [String: ONNXFunctionProto]
    private static let maximumDepth = 32

    init(functions: [ONNXFunctionProto]) {
        var byName: [String: ONNXFunctionProto] = [:]
        for function in functions { byName[Self.key(function.domain, function.name)] = function }
        self.functions = byName
    }

    private static func key(_ domain: String, _ name: String) -> String {
        "\(domain == "ai.onnx" ? "" : domain)|\(name)"
    }

    func inline(_ nodes: [ONNXNodeProto]) throws(ModelError) -> [ONNXNodeProto] {
        guard !functions.isEmpty else { return nodes }
        var counter = 0
        return try expand(nodes, depth: 0, counter: &counter)
    }

    private func expand(_ nodes: [ONNXNodeProto], depth: Int, counter: inout Int) throws(ModelError) -> [ONNXNodeProto]
    {
        var result: [ONNXNodeProto] = []
        for node in nodes {
            guard let function = functions[Self.key(node.domain, node.opType)] else {
                result.append(node)
                continue
            }
            guard depth < Self.maximumDepth else {
                throw ModelError(
                    .invalidModel,
                    "local function '\(function.name)' calls itself (or nests deeper than \(Self.maximumDepth))")
            }
            counter += 1
            let body = try instantiate(
                function, call: node, prefix: "\(node.name.isEmpty ? function.name : node.name)#\(counter)/")
            result.append(contentsOf: try expand(body, depth: depth + 1, counter: &counter))
        }
        return result
    }

    private func instantiate(_ function: ONNXFunctionProto, call: ONNXNodeProto, prefix: String) throws(ModelError)
        -> [ONNXNodeProto]
    {
        var names: [String: String] = [:]
        for (index, formal) in function.inputs.enumerated() {
            names[formal] = index < call.inputs.count ? call.inputs[index] : ""
        }
        for (index, formal) in function.outputs.enumerated() {
            names[formal] = index < call.outputs.count ? call.outputs[index] : ""
        }
        var bound: [String: ONNXAttribute] = [:]
        for attribute in function.attributeDefaults { bound[attribute.name] = attribute }
        for attribute in call.attributes { bound[attribute.name] = attribute }
        func rename(_ name: String) -> String {
            if name.isEmpty { return name }
            if let mapped = names[name] { return mapped }
            return prefix + name
        }
        return function.nodes.map { node in
            var copy = node
            copy.name = prefix + node.name
            copy.inputs = node.inputs.map(rename)
            copy.outputs = node.outputs.map(rename)
            copy.attributes = node.attributes.compactMap { attribute in
                guard !attribute.referenceName.isEmpty else { return attribute }
                guard var value = bound[attribute.referenceName] else { return nil }
                value.name = attribute.name
                return value
            }
            return copy
        }
    }
}
