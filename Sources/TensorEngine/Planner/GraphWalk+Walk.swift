import Synchronization

/// The walk behind ``PendingGraph``: the nodes reached, in position order, with the structure's
/// hash and wiring.
///
/// A walk marks each node it reaches with its position. One walk at a time (the first to claim
/// them) keeps its marks on the nodes themselves (``Node/walkEpoch``, ``Node/walkPosition``),
/// stamped with an epoch of its own so that earlier walks' marks read as none; a walk that
/// starts while another holds them keeps its marks in a map by node id. Looking a thousand
/// nodes up in a map was half of the walk of a chain of a thousand scalar steps.
struct GraphWalk {
    var nodes: [Node] = []
    var wiring: [Int] = []
    var sourceFlags: [Bool] = []
    var sourceCount = 0
    var structureHash = 0

    /// Whether a walk holds the marks on the nodes; taken and given back with acquiring and
    /// releasing order, so each holder sees the marks its predecessors wrote.
    private static let nodeMarksHeld = Atomic<Bool>(false)
    /// The epoch of the last walk that held the marks on the nodes; read and written only by the
    /// holder.
    nonisolated(unsafe) private static var lastEpoch: UInt64 = 0

    /// Walks the pending graph behind `targets`, with marks on the nodes when no other walk holds
    /// them (and `marksOnNodes` allows it; the tests walk both ways).
    static func walk(from targets: [Node], marksOnNodes: Bool = true) -> GraphWalk {
        if marksOnNodes,
            nodeMarksHeld.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        {
            defer { nodeMarksHeld.store(false, ordering: .releasing) }
            lastEpoch += 1
            var walker = Walker(marks: NodeMarks(epoch: lastEpoch))
            return walker.walk(from: targets)
        }
        var walker = Walker(marks: MapMarks(capacity: recentSize.load(ordering: .relaxed)))
        let walk = walker.walk(from: targets)
        recentSize.store(min(walk.nodes.count, largestSizeHint), ordering: .relaxed)
        return walk
    }

    /// The number of nodes the last walk with a map reached (up to ``largestSizeHint``): the size
    /// the next one's map starts at, as a program evaluates graphs of much the same size over and
    /// over. A hint, shared by every thread without order.
    private static let recentSize = Atomic<Int>(0)
    private static let largestSizeHint = 1 << 10
}

/// Where a walk keeps the positions of the nodes it reaches.
private protocol WalkMarks {
    /// The node's mark: its position, -2 while its inputs are walked, `nil` before it is reached.
    func mark(of node: Node) -> Int?
    mutating func setMark(of node: Node, to mark: Int)
}

/// Marks on the nodes, stamped with the walk's epoch (the walk holds them alone).
private struct NodeMarks: WalkMarks {
    let epoch: UInt64

    func mark(of node: Node) -> Int? { node.walkEpoch == epoch ? node.walkPosition : nil }

    func setMark(of node: Node, to mark: Int) {
        node.walkEpoch = epoch
        node.walkPosition = mark
    }
}

/// Marks in a map by node id.
private struct MapMarks: WalkMarks {
    var marks: NodeMap<Int>

    init(capacity: Int) { marks = NodeMap(capacity: capacity) }

    func mark(of node: Node) -> Int? { marks[node.id] }

    mutating func setMark(of node: Node, to mark: Int) { marks[node.id] = mark }
}

/// One walk's state, in a struct whose methods change it: local functions and closures that
/// captured these as variables had every access checked for exclusivity at run time.
private struct Walker<Marks: WalkMarks> {
    var marks: Marks
    var result = GraphWalk()
    var hasher = StructureHasher()
    /// The positions of the inputs met so far by each node being walked, the innermost last.
    var inputPositions: [Int] = []
    var stack: [Frame] = []

    /// A node being walked. Frames hold their nodes unretained: the targets, alive for the
    /// whole walk, hold every node reached through their operands, and retaining each frame's
    /// node (and each operand as the loop over them binds it) was a sixth of a chain of scalar
    /// steps' evaluation.
    struct Frame {
        let node: Unmanaged<Node>
        /// The next input to reach.
        var next: Int
        /// Where the node's input positions start in `inputPositions`.
        let firstInput: Int
    }

    init(marks: Marks) {
        self.marks = marks
        // Room for small graphs up front: growing an array from empty reallocates it twice.
        result.nodes.reserveCapacity(8)
        result.wiring.reserveCapacity(16)
        result.sourceFlags.reserveCapacity(8)
        inputPositions.reserveCapacity(16)
        stack.reserveCapacity(16)
    }

    mutating func walk(from targets: [Node]) -> GraphWalk {
        withExtendedLifetime(targets) {
            for target in targets { walk(fromTarget: target) }
        }
        for target in targets {
            let position = marks.mark(of: target) ?? -1
            hasher.combine(position)
            result.wiring.append(position)
        }
        result.structureHash = hasher.finalize()
        return result
    }

    /// The position of `node` when it has one (a source gets it now), or `nil` for a pending
    /// node met for the first time, which is to be walked.
    private mutating func reach(_ node: Node) -> Int? {
        if let mark = marks.mark(of: node) { return mark }
        guard node.hasStoredResult else {
            marks.setMark(of: node, to: -2)
            return nil
        }
        let position = result.nodes.count
        marks.setMark(of: node, to: position)
        hasher.combine(-3)
        hasher.combine(node.signature)
        result.nodes.append(node)
        result.sourceFlags.append(true)
        result.sourceCount += 1
        return position
    }

    /// Reaches `target` and walks the pending nodes behind it.
    private mutating func walk(fromTarget target: Node) {
        guard reach(target) == nil else { return }
        stack.append(Frame(node: .passUnretained(target), next: 0, firstInput: inputPositions.count))
        while let top = stack.last {
            let input = top.node._withUnsafeGuaranteedRef { $0.unretainedInput(at: top.next) }
            if let input {
                stack[stack.count - 1].next += 1
                if let position = input._withUnsafeGuaranteedRef({ reach($0) }) {
                    inputPositions.append(position)
                } else {
                    stack.append(Frame(node: input, next: 0, firstInput: inputPositions.count))
                }
                continue
            }
            stack.removeLast()
            top.node._withUnsafeGuaranteedRef { finish($0, inputsFrom: top.firstInput) }
        }
    }

    /// Gives a pending node whose inputs all have positions its own.
    private mutating func finish(_ node: Node, inputsFrom first: Int) {
        hasher.combine(node.op)
        hasher.combine(node.signature)
        for index in first..<inputPositions.count {
            hasher.combine(inputPositions[index])
            result.wiring.append(inputPositions[index])
        }
        hasher.combine(-2)
        result.wiring.append(-2)
        inputPositions.removeLast(inputPositions.count - first)
        let position = result.nodes.count
        marks.setMark(of: node, to: position)
        result.nodes.append(node)
        result.sourceFlags.append(false)
        // The user that reached this node has it as its input now.
        if !stack.isEmpty { inputPositions.append(position) }
    }
}

/// The running hash of a graph's structure: FxHash's step (rotate, exclusive-or, multiply) on
/// each integer, finished with MurmurHash3's 64-bit mixer. Not resistant to chosen keys, which
/// graphs are not: a collision costs a plan cache comparison, never a wrong plan. `Hasher`
/// (SipHash) took a tenth of a cached evaluation of a chain of scalar steps.
struct StructureHasher {
    private var state: UInt64 = 0

    @inline(__always)
    mutating func combine(_ value: Int) {
        let rotated = state << 5 | state >> 59
        state = (rotated ^ UInt64(bitPattern: Int64(value))) &* 0x517C_C1B7_2722_0A95
    }

    /// The op's kind, and its attributes' `Hashable` hash when it has any.
    mutating func combine(_ op: Op) {
        combine(op.kind.rawValue)
        if case .none = op.attributes { combine(0) } else { combine(op.attributes.hashValue) }
    }

    mutating func combine(_ signature: TensorSignature) {
        combine(Int(signature.scalarType.caseNumber))
        combine(signature.shape.count)
        for extent in signature.shape { combine(extent) }
    }

    func finalize() -> Int {
        var mixed = state
        mixed ^= mixed >> 33
        mixed &*= 0xFF51_AFD7_ED55_8CCD
        mixed ^= mixed >> 33
        mixed &*= 0xC4CE_B9FE_1A85_EC53
        mixed ^= mixed >> 33
        return Int(truncatingIfNeeded: mixed)
    }
}
