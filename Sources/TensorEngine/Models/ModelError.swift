/// The error a model throws when it cannot be loaded or cannot run what it is given.
///
/// Loading a model whose graph uses operators the engine does not implement throws one error of
/// kind ``Kind/unsupportedOperators`` that lists every such node (``unsupportedNodes``), not just
/// the first, so that a user sees at once how far the model is from running.
public struct ModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in categories a caller can switch over.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The graph uses operators (or versions of them) the engine does not implement.
        case unsupportedOperators
        /// The model is well-formed on the wire but not a valid model (an undefined value, a cycle,
        /// an attribute of the wrong type, an operator set out of range).
        case invalidModel
        /// A node cannot run on the values it receives (shapes, types, attribute values).
        case invalidNode
        /// An input feature is missing, of the wrong type or of the wrong shape.
        case invalidInput
        /// An element type the engine cannot hold (strings, complex numbers, 8-bit floats).
        case unsupportedType
    }

    /// One node of a model that the engine cannot run.
    public struct UnsupportedNode: Sendable, Hashable, CustomStringConvertible {
        /// The node's name (may be empty: ONNX does not require names).
        public let name: String
        /// The operator's type (`Conv`), with its domain when it is not the default one.
        public let opType: String
        /// The version of the operator's set the model imports.
        public let opsetVersion: Int
        /// Why it cannot run (`not implemented`, `opset 6 is older than the engine reads`).
        public let reason: String

        /// `Conv 'conv1' (opset 17): not implemented`.
        public var description: String {
            "\(opType) '\(name)' (opset \(opsetVersion)): \(reason)"
        }
    }

    /// The category of the error.
    public let kind: Kind
    /// A sentence describing the problem, with the offending names and values.
    public let message: String
    /// The node at fault (its name, else its op type and position), when one is.
    public let node: String?
    /// For ``Kind/unsupportedOperators``: every node that cannot run.
    public let unsupportedNodes: [UnsupportedNode]

    init(_ kind: Kind, _ message: String, node: String? = nil, unsupportedNodes: [UnsupportedNode] = []) {
        self.kind = kind
        self.message = message
        self.node = node
        self.unsupportedNodes = unsupportedNodes
    }

    /// `node 'attention/Softmax': message`, or the list of unsupported nodes.
    public var description: String {
        if kind == .unsupportedOperators {
            let lines = unsupportedNodes.map { "  \($0)" }.joined(separator: "\n")
            return "\(message):\n\(lines)"
        }
        if let node { return "node \(node): \(message)" }
        return message
    }
}
