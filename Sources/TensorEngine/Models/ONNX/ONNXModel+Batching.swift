import Foundation

// Batch predictions that batch: inputs of a model with a symbolic batch axis are stacked along it
// into one evaluation, and the outputs are split back.
//
// Inputs whose other sizes differ are padded to the longest when the size is named by a mask
// input (`attention_mask [batch, sequence]`): the padding is masked out, so the real positions'
// values do not change. The outputs' batch and padded axes are found by building the graph (no
// evaluation) for the batch and for its shortest member: an axis is split or trimmed only where
// the two shapes prove it follows the batch or the padded size; an output that fits neither sends
// the group back to one-by-one predictions.

extension ONNXModel {
    /// The most samples stacked into one evaluation.
    static let maximumBatchSize = 64

    /// Predicts several inputs, stacking those that fit into batched evaluations (see above);
    /// others, and every input of a stateful model, run one by one. Outputs are in input order.
    public func predictions(from inputs: [any FeatureProvider], policy: ComputePolicy) throws -> [any FeatureProvider] {
        guard inputs.count > 1, statePairs.isEmpty, let batchSymbol else {
            return try inputs.map { try prediction(from: $0, policy: policy) }
        }
        let samples = try inputs.map { input throws(ModelError) in try tensors(from: input) }
        var outputs = [(any FeatureProvider)?](repeating: nil, count: inputs.count)
        for group in groups(of: samples, batchSymbol: batchSymbol) {
            for start in stride(from: 0, to: group.count, by: Self.maximumBatchSize) {
                let members = Array(group[start..<Swift.min(start + Self.maximumBatchSize, group.count)])
                let predicted = try predictBatch(members.map { samples[$0] }, policy: policy)
                for (member, output) in zip(members, predicted) { outputs[member] = output }
            }
        }
        return try outputs.enumerated().map { index, output in
            if let output { return output }
            return try prediction(from: inputs[index], policy: policy)
        }
    }

    /// The batch axis's name, when every input and output of the model declares axis 0 with one
    /// symbolic name.
    var batchSymbol: String? {
        var symbol: String?
        for description in modelDescription.inputDescriptions {
            guard case .symbolic(let name)? = description.multiArrayConstraint?.shape?.first else { return nil }
            if let symbol, symbol != name { return nil }
            symbol = name
        }
        return symbol
    }

    /// The symbolic sizes a mask input names (besides the batch's): inputs may be padded along them.
    private func paddableSymbols(batchSymbol: String) -> Set<String> {
        var symbols: Set<String> = []
        for description in modelDescription.inputDescriptions where description.name.lowercased().contains("mask") {
            for dimension in description.multiArrayConstraint?.shape ?? [] {
                if case .symbolic(let name) = dimension, name != batchSymbol { symbols.insert(name) }
            }
        }
        return symbols
    }

    /// Samples that can share an evaluation: equal shapes apart from the batch axis and paddable
    /// sizes.
    private func groups(of samples: [[String: Tensor]], batchSymbol: String) -> [[Int]] {
        let paddable = paddableSymbols(batchSymbol: batchSymbol)
        var groups: [[Int]] = []
        var byKey: [[String: [Int]]: Int] = [:]
        for (index, sample) in samples.enumerated() {
            var key: [String: [Int]] = [:]
            for description in modelDescription.inputDescriptions {
                guard let tensor = sample[description.name] else { continue }
                let declared = description.multiArrayConstraint?.shape ?? []
                key[description.name] =
                    tensor.shape.enumerated().map { axis, size in
                        if axis == 0 { return -1 }
                        if axis < declared.count, case .symbolic(let name) = declared[axis], paddable.contains(name) {
                            return -1
                        }
                        return size
                    } + [tensor.dtype == .float32 ? 0 : 1, tensor.rank]
            }
            if let group = byKey[key] {
                groups[group].append(index)
            } else {
                byKey[key] = groups.count
                groups.append([index])
            }
        }
        return groups
    }

    /// Predicts one group of compatible samples as one evaluation; `nil` entries when the outputs
    /// cannot be split (the caller predicts those one by one).
    private func predictBatch(_ samples: [[String: Tensor]], policy: ComputePolicy) throws -> [(any FeatureProvider)?] {
        guard samples.count > 1, let batchSymbol else { return try samples.map { try predictOne($0, policy: policy) } }
        let paddable = paddableSymbols(batchSymbol: batchSymbol)
        let sizes = samples.map(symbolSizes(of:))
        var longest: [String: Int] = [:]
        for symbol in paddable { longest[symbol] = sizes.compactMap { $0[symbol] }.max() }
        var stacked: [String: Tensor] = [:]
        for description in modelDescription.inputDescriptions {
            let declared = description.multiArrayConstraint?.shape ?? []
            let parts = samples.enumerated().map { index, sample -> Tensor in
                let tensor = sample[description.name] ?? Tensor(zerosOf: .float32, shape: [])
                var padding = Array(repeating: (before: 0, after: 0), count: tensor.rank)
                var padded = false
                for axis in 1..<Swift.max(tensor.rank, 1) where axis < declared.count {
                    guard case .symbolic(let name) = declared[axis], let target = longest[name],
                        let own = sizes[index][name], target > own
                    else { continue }
                    padding[axis].after = target - own
                    padded = true
                }
                return padded ? tensor.padded(forSizes: padding) : tensor
            }
            stacked[description.name] = Tensor(concatenating: parts, alongAxis: 0)
        }
        // The shortest member shows which output axes follow the padded sizes.
        let probe =
            sizes.indices.min { lhs, rhs in
                paddable.reduce(0) { $0 + (sizes[lhs][$1] ?? 0) } < paddable.reduce(0) { $0 + (sizes[rhs][$1] ?? 0) }
            } ?? 0
        let batchedShapes = try outputs(for: stacked, trace: nil).mapValues(\.shape)
        let probeShapes = try outputs(for: samples[probe], trace: nil).mapValues(\.shape)
        let total = samples.reduce(0) { $0 + ($1.values.first?.shape.first ?? 0) }
        let probeBatch = samples[probe].values.first?.shape.first ?? 0
        let probeLengths = Set(paddable.compactMap { sizes[probe][$0] })
        let paddedLengths = Set(paddable.compactMap { longest[$0] })
        var axesToTrim: [String: [Int: String]] = [:]
        for description in outputDescriptions {
            guard let batched = batchedShapes[description.name], let single = probeShapes[description.name],
                batched.count == single.count, !batched.isEmpty, batched[0] == total, single[0] == probeBatch
            else { return samples.map { _ in nil } }
            for axis in 1..<batched.count where batched[axis] != single[axis] {
                guard paddedLengths.contains(batched[axis]), probeLengths.contains(single[axis]),
                    let symbol = paddable.first(where: {
                        longest[$0] == batched[axis] && sizes[probe][$0] == single[axis]
                    })
                else { return samples.map { _ in nil } }
                axesToTrim[description.name, default: [:]][axis] = symbol
            }
        }
        let results = try predict(stacked, policy: policy)
        var offset = 0
        var providers: [(any FeatureProvider)?] = []
        for (index, sample) in samples.enumerated() {
            let count = sample.values.first?.shape.first ?? 0
            var tensors: [String: Tensor] = [:]
            for description in outputDescriptions {
                guard let result = results[description.name] else { continue }
                tensors[description.name] = try ONNXModel.rows(
                    of: result, from: offset, count: count, trimming: axesToTrim[description.name] ?? [:],
                    to: sizes[index], policy: policy)
            }
            offset += count
            providers.append(DictionaryFeatureProvider(tensors: tensors))
        }
        return providers
    }

    /// One sample's prediction, as a provider.
    private func predictOne(_ sample: [String: Tensor], policy: ComputePolicy) throws -> any FeatureProvider {
        DictionaryFeatureProvider(tensors: try predict(sample, policy: policy))
    }

    /// Rows `from..<from + count` of a computed result along axis 0, each axis in `trimming` cut
    /// to the sample's size of its symbol. Rows of a computed result share its memory; trimming
    /// makes a lazy slice.
    static func rows(
        of result: Tensor, from start: Int, count: Int, trimming: [Int: String], to sizes: [String: Int],
        policy: ComputePolicy
    ) throws(TensorError) -> Tensor {
        var rows: Tensor
        if let value = result.node?.storedResult, let buffer = value.buffer as? HostBuffer,
            value.layout.isContiguous
        {
            let rowCount = result.shape.dropFirst().reduce(1, *)
            let elementSize = result.dtype.byteCount
            let first = buffer.pointer + (value.layout.offset + start * rowCount) * elementSize
            let shape = [count] + result.shape.dropFirst()
            let view = HostBuffer(borrowing: first, byteCount: count * rowCount * elementSize, owner: buffer)
            rows = Tensor.constant(
                value: Value(buffer: view, layout: Layout(contiguous: shape), scalarType: result.dtype),
                op: "prediction")
        } else {
            rows = Tensor.record(
                .slice(
                    result.shape.enumerated().map { axis, size in
                        axis == 0
                            ? SliceDimension(start: start, count: count, step: 1)
                            : SliceDimension(start: 0, count: size, step: 1)
                    }), [result], at: nil)
        }
        guard !trimming.isEmpty else { return rows }
        let trimmed = Tensor.record(
            .slice(
                rows.shape.enumerated().map { axis, size in
                    let own = trimming[axis].flatMap { sizes[$0] } ?? size
                    return SliceDimension(start: 0, count: Swift.min(own, size), step: 1)
                }), [rows], at: nil)
        try Tensor.evaluateNow([trimmed], policy: policy)
        return trimmed
    }
}
