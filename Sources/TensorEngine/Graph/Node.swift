import Synchronization

/// One recorded operation in the lazy graph: the op, its operands and the checked signature of its
/// result. Immutable, except for the result kept once the node has been materialized.
package final class Node: Sendable {
    private static let nextID = Atomic<UInt64>(0)

    /// A process-unique identity, increasing in creation order (so operands have smaller ids).
    let id: UInt64
    let op: Op
    /// The operands. Only `deinit` writes them, taking a dying chain apart (see there).
    ///
    /// This and the node's other variables skip Swift's run-time exclusivity checks: nothing can
    /// access them overlappingly (each is written by one owner at a time, as said on each), and
    /// the checks, made on every access of a class's variable, were a sixth of the time of a
    /// chain of scalar steps (its graph walk and its freeing).
    @exclusivity(unchecked) nonisolated(unsafe) private var operands: OperandStorage
    package let signature: TensorSignature
    /// Where the result's elements sit in its buffer. Every op but a view and an append writes a
    /// fresh row-major buffer; a view's layout follows from its operand's and an append's from its
    /// first operand's (its row's ``OpDescriptor/resultLayout``), so layouts are known when recording.
    let layout: Layout
    /// The user's call site that recorded the node, when known.
    let location: SourceLocation?
    /// The result kept on the node: a constant's data, or a materialized result (host, contiguous).
    /// Written once, before ``resultState`` says so (see ``store(_:)``), and only read after.
    @exclusivity(unchecked) nonisolated(unsafe) private var result: Value?
    /// Whether ``result`` is there: ``ResultState``'s raw values. Every evaluation's graph walk
    /// asks each node it reaches, so the question is one load, not a lock (whose two atomic
    /// read-modify-writes were most of the walk's time on a chain of scalar steps).
    private let resultState: Atomic<Int>
    /// The epoch of the last graph walk that marked the node, and its mark (``GraphWalk``): read
    /// and written only by the walk that holds the marks on the nodes.
    @exclusivity(unchecked) nonisolated(unsafe) var walkEpoch: UInt64 = 0
    @exclusivity(unchecked) nonisolated(unsafe) var walkPosition = 0

    private enum ResultState: Int {
        case empty, storing, stored
    }

    convenience init(
        op: Op, inputs: [Node], signature: TensorSignature, location: SourceLocation?, data: Value? = nil
    ) {
        self.init(
            op: op, inputs: inputs, signature: signature,
            layout: data?.layout ?? Node.layout(of: op, inputs: inputs, signature: signature), location: location,
            data: data)
    }

    /// A node whose layout the caller worked out (``layout`` says which it must be).
    convenience init(
        op: Op, inputs: [Node], signature: TensorSignature, layout: Layout, location: SourceLocation?,
        data: Value? = nil
    ) {
        self.init(
            op: op, operands: OperandStorage(inputs), signature: signature, layout: layout, location: location,
            data: data)
    }

    /// A binary op's node, its two operands not gathered into an array first.
    convenience init(
        op: Op, operands first: Node, _ second: Node, signature: TensorSignature, layout: Layout,
        location: SourceLocation?
    ) {
        self.init(
            op: op, operands: OperandStorage(first, second), signature: signature, layout: layout,
            location: location, data: nil)
    }

    private init(
        op: Op, operands: consuming OperandStorage, signature: TensorSignature, layout: Layout,
        location: SourceLocation?, data: Value?
    ) {
        self.id = Node.nextID.add(1, ordering: .relaxed).newValue
        self.op = op
        self.operands = operands
        self.signature = signature
        self.layout = layout
        self.location = location
        self.result = data
        self.resultState = Atomic(data == nil ? ResultState.empty.rawValue : ResultState.stored.rawValue)
    }

    /// Releases the operands without recursion. Left to Swift, releasing the last tensor of a long
    /// chain (a loop of a million recorded steps) frees each node from inside its user's `deinit`,
    /// one stack frame per node, and overflows the stack. Here an operand that this node alone
    /// holds gives up its own operands to the list first, so it is freed with none and each
    /// `deinit` runs to its end before the next node is freed.
    deinit {
        guard operands.count > 0 else { return }
        // Operands this node's chain alone holds, which give up their own operands before they
        // are freed: the next one in hand, the others in a list (a chain's shared constants are
        // released where they are met, not kept there).
        var dying: [Node] = []
        var next = operands.release(handingOverDying: &dying)
        while let node = next ?? dying.popLast() {
            next = node.operands.release(handingOverDying: &dying)
        }
    }

    /// The operands, in order.
    var inputs: NodeInputs { NodeInputs(of: self) }

    /// The number of operands.
    var inputCount: Int { operands.count }

    /// The operand at `position`, unretained (the node holds it), or `nil` past the last: for the
    /// graph walk, which would otherwise retain and release each operand it steps to.
    func unretainedInput(at position: Int) -> Unmanaged<Node>? { operands.unretained(at: position) }

    private static func layout(of op: Op, inputs: [Node], signature: TensorSignature) -> Layout {
        guard let input = inputs.first else { return Layout(contiguous: signature.shape) }
        // A primitive whose kernels write elsewhere than a fresh row-major buffer (an append's
        // prefix of a growable buffer) says where, in its row.
        if let rule = op.descriptor.resultLayout, let layout = rule(op, input.layout, input.signature, signature) {
            return layout
        }
        // The front end inserts a copy before a reshape that cannot be a view.
        if let viewed = input.layout.viewed(by: op) { return viewed }
        // A fresh row-major result shaped like a row-major operand (most elementwise ops) shares
        // the operand's layout, arrays included, instead of computing strides again.
        if input.layout.isRowMajor(shape: signature.shape) { return input.layout }
        return Layout(contiguous: signature.shape)
    }

    /// The kept result, if the node is a constant or has been materialized (a result being stored
    /// by another thread at this moment is not there yet).
    package var storedResult: Value? {
        resultState.load(ordering: .acquiring) == ResultState.stored.rawValue ? result : nil
    }

    /// Whether the node holds a result (``storedResult`` is not `nil`), without copying it: one
    /// load, no reference counting, for the graph walk that asks every node it reaches.
    var hasStoredResult: Bool { resultState.load(ordering: .acquiring) == ResultState.stored.rawValue }

    /// Keeps a materialized result (the first one stored wins; later ones are equal anyway): the
    /// thread that claims the empty state writes it, then publishes it by releasing the state.
    func store(_ value: Value) {
        let claimed = resultState.compareExchange(
            expected: ResultState.empty.rawValue, desired: ResultState.storing.rawValue, ordering: .acquiring)
        guard claimed.exchanged else { return }
        result = value
        resultState.store(ResultState.stored.rawValue, ordering: .releasing)
    }
}
