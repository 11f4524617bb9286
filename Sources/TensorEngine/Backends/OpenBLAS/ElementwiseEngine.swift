/// Evaluates a fused elementwise region (or a single elementwise op) in one pass over memory.
///
/// The output is cut into blocks of ``blockSize`` elements (16 KiB of floats: a block's registers
/// stay in L2, and each input streams over four pages at a time, long enough for the hardware
/// prefetchers, which stop at page boundaries, to run ahead; measured against 4 and 8 KiB). For
/// each block, operands are read straight from memory when row-major, or gathered from their
/// strided view; each instruction then runs as a vector loop over the block; the last writes the
/// output. Intermediates never go to main memory. Registers hold `Float`; `Bool`
/// values are 0 or 1. Large outputs are split across threads.
///
/// A `Float` operand that repeats one contiguous run (a bias `[n]` broadcast to `[rows, n]`, see
/// ``period(of:)``) is laid out once per worker as that run repeated over a block's length, and
/// each block reads it in place from the right phase, instead of being gathered block by block.
struct ElementwiseEngine {
    static let blockSize = 4096

    /// Floats between one register's end and the next's start (one 64-byte line, plus 16 floats
    /// more so that neighbouring registers also differ in their 128-byte pair).
    static let slotPadding = 48

    let region: FusedRegion

    /// Whether every register of the region is `Float` or `Bool` (the types this engine holds).
    static func supports(_ region: FusedRegion) -> Bool {
        let types = region.inputTypes + region.instructionTypes
        return types.allSatisfy { $0 == .float32 || $0 == .bool }
    }

    func run(inputs: [Value], output: UnsafeMutableRawPointer, count: Int) throws(TensorError) {
        var sources: [(pointer: UnsafeRawPointer, layout: Layout, type: ScalarType)] = []
        for input in inputs {
            guard let buffer = input.buffer as? HostBuffer else {
                throw TensorError(.backendFailure, op: "fused", message: "a \(input.memorySpace) buffer reached the openblas backend")
            }
            sources.append((UnsafeRawPointer(buffer.pointer), input.layout, input.scalarType))
        }
        let registerCount = region.inputCount + region.instructions.count
        let flops = max(1, Int(region.flopsPerElement))
        let workers = Parallel.workerCount(forElements: count, costPerElement: max(1, flops / 4))
        // Small outputs (scalars, short rows) need only as much scratch as they have elements.
        let block = max(1, min(Self.blockSize, count))
        // Registers sit `slotStride` floats apart, not exactly 4 KiB: loads from one register and
        // stores to the next at the same 4 KiB offset look dependent to the CPU's memory
        // disambiguation (4K aliasing) and stall every instruction's loop.
        let slotStride = block + Self.slotPadding
        Parallel.forEachRange(count, parts: workers, alignment: Self.blockSize) { range in
            let scratch = UnsafeMutablePointer<Float>.allocate(capacity: registerCount * slotStride)
            defer { scratch.deallocate() }
            var registers = [UnsafePointer<Float>](repeating: UnsafePointer(scratch), count: registerCount)
            // Operands broadcast from one scalar are filled once per worker; operands repeating
            // a run of `period` floats are tiled once per worker, `period + block` long.
            var constant = [Bool](repeating: false, count: region.inputCount)
            var tiled: [(pointer: UnsafeMutablePointer<Float>, period: Int)?] = Array(repeating: nil, count: region.inputCount)
            defer { for case let (pointer, _)? in tiled { pointer.deallocate() } }
            for (index, source) in sources.enumerated() {
                if source.layout.strides.allSatisfy({ $0 == 0 }) {
                    let slot = scratch + index * slotStride
                    let value = Self.load(source.pointer, source.type, source.layout.offset)
                    slot.update(repeating: value, count: block)
                    registers[index] = UnsafePointer(slot)
                    constant[index] = true
                } else if source.type == .float32, !source.layout.isContiguous, let period = Self.period(of: source.layout),
                          period > 0, period <= Self.maximumTiledPeriod {
                    let run = source.pointer.assumingMemoryBound(to: Float.self) + source.layout.offset
                    let tile = UnsafeMutablePointer<Float>.allocate(capacity: period + block)
                    for start in stride(from: 0, to: period + block, by: period) {
                        (tile + start).update(from: run, count: min(period, period + block - start))
                    }
                    tiled[index] = (tile, period)
                }
            }
            var start = range.lowerBound
            while start < range.upperBound {
                let length = min(block, range.upperBound - start)
                for (index, source) in sources.enumerated() where !constant[index] {
                    let slot = scratch + index * slotStride
                    if let (tile, period) = tiled[index] {
                        registers[index] = UnsafePointer(tile + start % period)
                    } else if source.type == .float32, source.layout.isContiguous {
                        registers[index] = source.pointer.assumingMemoryBound(to: Float.self) + source.layout.offset + start
                    } else if source.type == .float32 {
                        StridedRuns(layout: source.layout).gather(source.pointer.assumingMemoryBound(to: Float.self), from: start, count: length, into: slot) { $0 }
                        registers[index] = UnsafePointer(slot)
                    } else {
                        StridedRuns(layout: source.layout).gather(source.pointer.assumingMemoryBound(to: Bool.self), from: start, count: length, into: slot) { $0 ? 1 : 0 }
                        registers[index] = UnsafePointer(slot)
                    }
                }
                for (position, instruction) in region.instructions.enumerated() {
                    let register = region.inputCount + position
                    let isLast = position == region.instructions.count - 1
                    let target = isLast && region.outputType == .float32
                        ? output.assumingMemoryBound(to: Float.self) + start
                        : scratch + register * slotStride
                    Self.apply(instruction, registers, target, length)
                    registers[register] = UnsafePointer(target)
                }
                if region.outputType == .bool {
                    let result = registers[registerCount - 1]
                    let out = output.assumingMemoryBound(to: Bool.self) + start
                    for i in 0..<length { out[i] = result[i] != 0 }
                }
                start += length
            }
        }
    }

    /// The longest run tiled per worker (256 KiB of floats).
    static let maximumTiledPeriod = 1 << 16

    /// The length of the run a layout repeats, when it is one: its trailing axes are row-major
    /// contiguous and every axis before them has stride 0 (or length 1). Element `i` of such a
    /// layout, in row-major order, is element `i % period` of the run at its offset.
    static func period(of layout: Layout) -> Int? {
        var period = 1
        var axis = layout.rank - 1
        while axis >= 0, layout.shape[axis] == 1 || layout.strides[axis] == period {
            period *= layout.shape[axis]
            axis -= 1
        }
        while axis >= 0 {
            guard layout.strides[axis] == 0 || layout.shape[axis] == 1 else { return nil }
            axis -= 1
        }
        return period
    }

    @inline(__always)
    private static func load(_ pointer: UnsafeRawPointer, _ type: ScalarType, _ offset: Int) -> Float {
        type == .bool ? (pointer.assumingMemoryBound(to: Bool.self)[offset] ? 1 : 0) : pointer.assumingMemoryBound(to: Float.self)[offset]
    }

    private static func apply(_ instruction: FusedRegion.Instruction, _ registers: [UnsafePointer<Float>], _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        switch instruction {
        case .unary(let op, let a): BlockKernels.unary(op, registers[a], out, n)
        case .binary(let op, let a, let b): BlockKernels.binary(op, registers[a], registers[b], out, n)
        case .select(let m, let a, let b): BlockKernels.select(registers[m], registers[a], registers[b], out, n)
        case .cast(let type, let a):
            // Between Float and Bool registers: to Bool is `!= 0` (NaN is true), to Float is 0/1.
            if type == .bool { BlockKernels.map(n, registers[a], out) { VectorMath.indicator($0 .!= 0) } } else { out.update(from: registers[a], count: n) }
        }
    }
}
