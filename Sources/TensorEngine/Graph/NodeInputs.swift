/// A node's operands, in order, as a collection: a view of the node (see ``Node/inputs``).
struct NodeInputs: RandomAccessCollection, Sendable {
    private let owner: Node
    let endIndex: Int

    init(of owner: Node) {
        self.owner = owner
        endIndex = owner.inputCount
    }

    var startIndex: Int { 0 }

    subscript(position: Int) -> Node {
        guard let input = owner.unretainedInput(at: position) else {
            preconditionFailure("operand \(position) of a node with \(endIndex)")
        }
        return input.takeUnretainedValue()
    }
}

/// Where a node keeps its operands: the first two in place, unmanaged (the node retains them when
/// it is made and releases them when it is freed), the rest in an array. Every recorded op had
/// allocated an array for its one or two operands beside the node; making and freeing those, and
/// retaining the arrays as the graph walk read them, was a tenth of a chain of scalar steps.
///
/// Not copyable: the one owner of the references it holds is the node it is in.
struct OperandStorage: ~Copyable {
    private var first: Unmanaged<Node>?
    private var second: Unmanaged<Node>?
    private var rest: [Node]

    init(_ nodes: [Node]) {
        first = nodes.count > 0 ? .passRetained(nodes[0]) : nil
        second = nodes.count > 1 ? .passRetained(nodes[1]) : nil
        rest = nodes.count > 2 ? Array(nodes[2...]) : []
    }

    init(_ first: Node, _ second: Node) {
        self.first = .passRetained(first)
        self.second = .passRetained(second)
        rest = []
    }

    var count: Int { first == nil ? 0 : second == nil ? 1 : 2 + rest.count }

    /// The operand at `position`, unretained, or `nil` past the last.
    func unretained(at position: Int) -> Unmanaged<Node>? {
        switch position {
        case 0: first
        case 1: second
        default: position - 2 < rest.count ? .passUnretained(rest[position - 2]) : nil
        }
    }

    /// Lets go of the operands, leaving none here: each one held elsewhere too, or holding no
    /// operands of its own, is released now; the others, whose last holder this was, are handed
    /// back (the first returned, the rest appended to `dying`) to give up their own operands
    /// before they are freed (see ``Node``'s `deinit`).
    mutating func release(handingOverDying dying: inout [Node]) -> Node? {
        var handed: Node?
        if let unmanaged = first { Self.letGo(of: unmanaged.takeRetainedValue(), handingTo: &handed, or: &dying) }
        if let unmanaged = second { Self.letGo(of: unmanaged.takeRetainedValue(), handingTo: &handed, or: &dying) }
        first = nil
        second = nil
        guard !rest.isEmpty else { return handed }
        var others: [Node] = []
        swap(&others, &rest)
        while let operand = others.popLast() { Self.letGo(of: operand, handingTo: &handed, or: &dying) }
        return handed
    }

    /// Releases `operand` here unless this was its last holder and it holds operands of its own:
    /// then it goes to `handed` when that is free, or to `dying`.
    private static func letGo(of operand: consuming Node, handingTo handed: inout Node?, or dying: inout [Node]) {
        var operand = operand
        guard isKnownUniquelyReferenced(&operand), operand.inputCount > 0 else { return }
        if handed == nil { handed = operand } else { dying.append(operand) }
    }

    /// Releases what is left (a node's `deinit` lets go of its operands first; this is for a
    /// storage dropped otherwise).
    deinit {
        first?.release()
        second?.release()
    }
}
