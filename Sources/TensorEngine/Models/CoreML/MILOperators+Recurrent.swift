/// MIL's recurrent layers (`lstm`, `gru`, `rnn`), unrolled over the sequence into the engine's
/// ops: the input products of every step in one matrix product, then per step the recurrent
/// product and the gates. The sequence length is known when the graph is built.
extension MILOperators {
    static let recurrent: [String: MILOperator] = [
        "lstm": MILOperator(lower: lstm),
        "gru": MILOperator(lower: gru),
        "rnn": MILOperator(lower: rnn),
    ]

    /// One direction's weights: input `[G·H, I]`, recurrent `[G·H, H]`, bias `[G·H]`, and an
    /// LSTM's peepholes `[3·H]`.
    private struct Direction {
        let input: Tensor
        let recurrent: Tensor
        let bias: Tensor?
        let peephole: Tensor?
        let reversed: Bool
    }

    /// The directions an operation runs, from `direction` and the forward and backward weights.
    private static func directions(_ context: MILOperationContext, gates: Int) throws(ModelError) -> [Direction] {
        let direction = try context.string("direction", default: "forward")
        let forward = Direction(
            input: try context.tensor("weight_ih"), recurrent: try context.tensor("weight_hh"),
            bias: try context.optionalTensor("bias"), peephole: try context.optionalTensor("peephole"),
            reversed: direction == "reverse")
        switch direction {
        case "forward", "reverse": return [forward]
        case "bidirectional":
            let backward = Direction(
                input: try context.tensor("weight_ih_back"), recurrent: try context.tensor("weight_hh_back"),
                bias: try context.optionalTensor("bias_back"), peephole: try context.optionalTensor("peephole_back"),
                reversed: true)
            return [forward, backward]
        case let other: throw context.error("direction '\(other)' is not one MIL defines", .invalidModel)
        }
    }

    /// A named activation of MIL's recurrent layers.
    private static func activation(_ name: String, _ context: MILOperationContext) throws(ModelError)
        -> @Sendable (Tensor) -> Tensor
    {
        switch name {
        case "sigmoid": return { $0.sigmoid() }
        case "tanh": return { $0.tanh() }
        case "relu": return { $0.relu() }
        case "hard_sigmoid": return { $0.hardSigmoid() }
        case "linear": return { $0 }
        case let other: throw context.error("activation '\(other)' is not supported", .unsupportedOperators)
        }
    }

    /// The checked sizes `[s, b, I]` of `x` and the hidden size `H` of a direction's weights.
    private static func sizes(_ x: Tensor, _ direction: Direction, gates: Int, _ context: MILOperationContext)
        throws(ModelError) -> (steps: Int, batch: Int, hidden: Int)
    {
        guard x.rank == 3, direction.input.rank == 2, direction.recurrent.rank == 2,
            direction.input.shape[0] % gates == 0, direction.input.shape[1] == x.shape[2]
        else {
            throw context.error(
                "input \(describe(x.shape)) and weights \(describe(direction.input.shape)) do not fit a recurrent layer")
        }
        let hidden = direction.input.shape[0] / gates
        guard direction.recurrent.shape == [gates * hidden, hidden] else {
            throw context.error("recurrent weights \(describe(direction.recurrent.shape)) are not [\(gates * hidden), \(hidden)]")
        }
        return (x.shape[0], x.shape[1], hidden)
    }

    /// Every step's input product plus bias, `[s, b, G·H]`, in one product.
    private static func inputProducts(_ x: Tensor, _ direction: Direction) -> Tensor {
        let (steps, batch) = (x.shape[0], x.shape[1])
        var products = x.reshaped(to: [steps * batch, x.shape[2]]).matmul(direction.input.transposed())
        if let bias = direction.bias { products = products + bias }
        return products.reshaped(to: [steps, batch, direction.input.shape[0]])
    }

    /// The initial state of direction `index` of `count` from a `[b, count·H]` parameter (zeros
    /// when not bound).
    private static func initial(
        _ parameter: String, _ context: MILOperationContext, index: Int, count: Int, batch: Int, hidden: Int,
        type: ScalarType
    ) throws(ModelError) -> Tensor {
        guard let given = try context.optionalTensor(parameter) else {
            return Tensor(zerosOf: type, shape: [batch, hidden])
        }
        let state = given.reshaped(to: [batch, count * hidden])
        return state.slice(alongAxis: 1, start: index * hidden, count: hidden)
    }

    /// Runs each direction with `step` (from the step's input product and the state to the new
    /// state and the step's output) and joins the outputs: `[s or 1, b, D·H]` and each final state
    /// `[b, D·H]`.
    private static func unrolled(
        _ context: MILOperationContext, _ x: Tensor, _ directions: [Direction], gates: Int, stateCount: Int,
        initialNames: [String], step: (Tensor, [Tensor], Direction, Int) -> [Tensor]
    ) throws(ModelError) -> [MILValue] {
        var sequences: [Tensor] = []
        var finals = [[Tensor]](repeating: [], count: stateCount)
        for (index, direction) in directions.enumerated() {
            let (steps, batch, hidden) = try sizes(x, direction, gates: gates, context)
            let products = inputProducts(x, direction)
            var state = try initialNames.map { name throws(ModelError) in
                try initial(name, context, index: index, count: directions.count, batch: batch, hidden: hidden, type: x.dtype)
            }
            var outputs = [Tensor](repeating: state[0], count: steps)
            let order = direction.reversed ? Array((0..<steps).reversed()) : Array(0..<steps)
            for time in order {
                let product = products.slice(alongAxis: 0, start: time, count: 1).reshaped(to: [batch, gates * hidden])
                state = step(product, state, direction, hidden)
                outputs[time] = state[0]
            }
            sequences.append(Tensor(stacking: outputs, alongAxis: 0))
            for (position, value) in state.enumerated() { finals[position].append(value) }
        }
        let joined = sequences.count == 1 ? sequences[0] : Tensor(concatenating: sequences, alongAxis: 2)
        let sequence: Tensor
        if try context.bool("output_sequence", default: false) {
            sequence = joined
        } else {
            // The last output of each direction: the forward one's at the end, a reversed one's at 0.
            let lasts = zip(sequences, directions).map { output, direction in
                output.slice(alongAxis: 0, start: direction.reversed ? 0 : output.shape[0] - 1, count: 1)
            }
            sequence = lasts.count == 1 ? lasts[0] : Tensor(concatenating: lasts, alongAxis: 2)
        }
        let states = finals.map { parts in parts.count == 1 ? parts[0] : Tensor(concatenating: parts, alongAxis: 1) }
        return try context.outputs([sequence] + states)
    }

    /// `lstm`: gates in the order input, forget, output, cell (`[i, f, o, z]`), optional peepholes
    /// `[3·H]` (input, forget, output) and `clip` on the gates' pre-activations.
    private static func lstm(_ context: MILOperationContext) throws(ModelError) -> [MILValue] {
        let x = try context.tensor("x")
        let directions = try directions(context, gates: 4)
        let gate = try activation(try context.string("recurrent_activation", default: "sigmoid"), context)
        let cell = try activation(try context.string("cell_activation", default: "tanh"), context)
        let output = try activation(try context.string("activation", default: "tanh"), context)
        let clip: Float? = context.has("clip") ? try context.float("clip") : nil
        return try unrolled(
            context, x, directions, gates: 4, stateCount: 2, initialNames: ["initial_h", "initial_c"]
        ) { product, state, direction, hidden in
            var preactivation = product + state[0].matmul(direction.recurrent.transposed())
            if let clip { preactivation = preactivation.pointwiseMax(-clip).pointwiseMin(clip) }
            func part(_ index: Int) -> Tensor { preactivation.slice(alongAxis: 1, start: index * hidden, count: hidden) }
            func peep(_ index: Int, _ c: Tensor) -> Tensor? {
                direction.peephole.map { $0.slice(alongAxis: 0, start: index * hidden, count: hidden) * c }
            }
            let previous = state[1]
            let inputGate = gate(peep(0, previous).map { part(0) + $0 } ?? part(0))
            let forgetGate = gate(peep(1, previous).map { part(1) + $0 } ?? part(1))
            let candidate = cell(part(3))
            let c = inputGate * candidate + forgetGate * previous
            let outputGate = gate(peep(2, c).map { part(2) + $0 } ?? part(2))
            return [outputGate * output(c), c]
        }
    }

    /// `gru`: gates in the order reset, update, output (`[r, z, o]`);
    /// `h = (1 − z)·o + z·h₋₁` with `o = act(Wₒx + r·(Rₒh₋₁) + bₒ)`.
    private static func gru(_ context: MILOperationContext) throws(ModelError) -> [MILValue] {
        let x = try context.tensor("x")
        let directions = try directions(context, gates: 3)
        let gate = try activation(try context.string("recurrent_activation", default: "sigmoid"), context)
        let output = try activation(try context.string("activation", default: "tanh"), context)
        return try unrolled(context, x, directions, gates: 3, stateCount: 1, initialNames: ["initial_h"]) {
            product, state, direction, hidden in
            let previous = state[0]
            let recurrent = previous.matmul(direction.recurrent.transposed())
            func part(_ tensor: Tensor, _ index: Int) -> Tensor {
                tensor.slice(alongAxis: 1, start: index * hidden, count: hidden)
            }
            let reset = gate(part(product, 0) + part(recurrent, 0))
            let update = gate(part(product, 1) + part(recurrent, 1))
            let candidate = output(part(product, 2) + reset * part(recurrent, 2))
            return [(1 - update) * candidate + update * previous]
        }
    }

    /// `rnn`: `h = act(Wx + Rh₋₁ + b)`.
    private static func rnn(_ context: MILOperationContext) throws(ModelError) -> [MILValue] {
        let x = try context.tensor("x")
        let directions = try directions(context, gates: 1)
        let act = try activation(try context.string("activation", default: "tanh"), context)
        return try unrolled(context, x, directions, gates: 1, stateCount: 1, initialNames: ["initial_h"]) {
            product, state, direction, _ in
            [act(product + state[0].matmul(direction.recurrent.transposed()))]
        }
    }
}
