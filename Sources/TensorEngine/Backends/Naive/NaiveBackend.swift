import Foundation

/// The reference backend: every primitive op as plain loops over strided data.
///
/// Written for clarity, not speed: it walks views through explicit element offsets and accumulates
/// sums in `Double`. It is the specification the other backends are checked against: elementwise
/// ops evaluate their table expressions element by element, and composite ops always run as their
/// decompositions (it registers no faster kernel for any).
package final class NaiveBackend: Backend {
    package var id: BackendID { .naive }
    package var deviceName: String { "host CPU (reference loops)" }
    package var memorySpace: MemorySpace { .host }

    /// One core's plain loops: well under a GFLOP/s and a GB/s, whatever the work.
    package var defaultProfile: DeviceProfile {
        .headline(
            backend: id, deviceName: deviceName, threads: 1, matmul: (0.3, nil, 0.3), matrixVector: 0.3, stream: 0.3,
            reduction: 0.3, arithmetic: 0.1, launch: 2e-6, transfer: nil, operation: 1e-6, evaluation: 3e-6)
    }

    /// The host CPU's last-level cache.
    package var cacheBytes: Int? { HostCaches.lastLevelBytes }

    package func upload(_ value: Value) throws(TensorError) -> Value { value }
    package func download(_ value: Value) throws(TensorError) -> Value { value }
    package func synchronize() throws(TensorError) {}

    package static let kernels: KernelRegistry<NaiveBackend> = {
        var registry = KernelRegistry<NaiveBackend>()
        registry.register(OpKind.kinds(in: .elementwise)) { backend, op, inputs, output throws(TensorError) in
            try backend.elementwise(op, inputs, output)
        }
        registry.register(OpKind.reductions) { backend, op, inputs, output throws(TensorError) in
            try backend.reduce(op, inputs[0], output)
        }
        registry.register(.cumulativeSum) { backend, op, inputs, output throws(TensorError) in
            try backend.scan(.sum, axis: op.axis, inputs[0], output)
        }
        registry.register(.cumulativeProduct) { backend, op, inputs, output throws(TensorError) in
            try backend.scan(.product, axis: op.axis, inputs[0], output)
        }
        registry.register(.topK) { backend, op, inputs, output throws(TensorError) in
            try backend.topK(k: op.k, part: op.topKOutput, inputs[0], output)
        }
        registry.register(.matmul) { backend, _, inputs, output throws(TensorError) in
            try backend.matmul(inputs[0], inputs[1], output)
        }
        registry.register(.convolution) { backend, op, inputs, output throws(TensorError) in
            try backend.convolution(op.convolutionGeometry, inputs, output)
        }
        registry.register([.maxPool, .averagePool]) { backend, op, inputs, output throws(TensorError) in
            try backend.pooling(op.kind, op.poolingGeometry, inputs[0], output)
        }
        registry.register(.contiguous) { backend, _, inputs, output throws(TensorError) in
            try backend.copy(inputs[0], output)
        }
        registry.register(.pad) { backend, op, inputs, output throws(TensorError) in
            try backend.pad(op.padding, op.fill, inputs[0], output)
        }
        registry.register(.concat) { backend, op, inputs, output throws(TensorError) in
            try backend.concat(axis: op.axis, inputs, output)
        }
        registry.register(.append) { backend, op, inputs, output throws(TensorError) in
            try backend.append(axis: op.axis, inputs, output)
        }
        registry.register(.gather) { backend, op, inputs, output throws(TensorError) in
            try backend.gather(axis: op.axis, inputs[0], inputs[1], output)
        }
        registry.register(.scatter) { backend, op, inputs, output throws(TensorError) in
            try backend.scatter(axis: op.axis, inputs[0], inputs[1], inputs[2], output)
        }
        return registry
    }()

    /// A fresh row-major host value for a result.
    func allocate(_ signature: TensorSignature, for op: String) throws(TensorError) -> (Value, HostElements) {
        let buffer = try HostBuffer(byteCount: signature.byteCount, op: op)
        let value = Value(buffer: buffer, layout: Layout(contiguous: signature.shape), scalarType: signature.scalarType)
        return (value, HostElements(buffer, signature.scalarType))
    }

    /// Any elementwise op: its table expression, element by element.
    func elementwise(_ op: Op, _ inputs: [Value], _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: op.name)
        let compiled = ScalarEvaluator.compile(op.elementwiseExpression.typed(operands: inputs.map(\.scalarType)))
        var elements: [HostElements] = []
        for input in inputs { elements.append(try HostElements(input)) }
        // Walked, not listed: a broadcast operand of a large result would list as many offsets.
        var walkers = inputs.map { $0.layout.offsetWalker() }
        let domains = inputs.map { ScalarDomain($0.scalarType) }
        let count = max(1, inputs.count)
        let floats = UnsafeMutablePointer<Float>.allocate(capacity: count)
        let doubles = UnsafeMutablePointer<Double>.allocate(capacity: count)
        let integers = UnsafeMutablePointer<Int32>.allocate(capacity: count)
        let longs = UnsafeMutablePointer<Int64>.allocate(capacity: count)
        defer {
            floats.deallocate()
            doubles.deallocate()
            integers.deallocate()
            longs.deallocate()
        }
        let registers = ScalarEvaluator.Registers(floats: floats, doubles: doubles, integers: integers, longs: longs)
        for index in 0..<output.elementCount {
            for operand in inputs.indices {
                let offset = walkers[operand].next()
                switch domains[operand] {
                case .float: floats[operand] = elements[operand].float(offset)
                case .double: doubles[operand] = elements[operand].double(offset)
                case .integer: integers[operand] = elements[operand].int(offset)
                case .long: longs[operand] = elements[operand].long(offset)
                }
            }
            switch compiled {
            case .float(let value): out.setFloat(value(registers), index)
            case .double(let value): out.setDouble(value(registers), index)
            case .integer(let value): out.setInt(value(registers), index)
            case .long(let value): out.setLong(value(registers), index)
            }
        }
        return result
    }

    /// A row-major copy of a (possibly strided) view.
    func copy(_ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, for: "contiguous")
        let x = try HostElements(input)
        var walker = input.layout.offsetWalker()
        for index in 0..<output.elementCount { out.copy(from: x, walker.next(), to: index) }
        return result
    }

    /// The running sum or product along an axis, in `Double` (wrapping `Int64` for integers).
    func scan(_ monoid: ReductionMonoid, axis: Int, _ input: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        try lines(monoid == .sum ? "cumulativeSum" : "cumulativeProduct", axis: axis, input, output) { x, o, source, destination in
            var running = monoid.identity
            var runningInt = monoid.integerIdentity(x.type)
            for (s, d) in zip(source, destination) {
                if x.type.isFloatingPoint {
                    running = monoid.combine(running, x.double(s))
                    o.setDouble(running, d)
                } else {
                    runningInt = monoid.combine(runningInt, x.long(s))
                    o.setLong(runningInt, d)
                }
            }
        }
    }
}
