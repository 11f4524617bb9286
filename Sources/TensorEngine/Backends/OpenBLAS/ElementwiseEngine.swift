import CIntrinsics

/// Evaluates a fused elementwise region (or a single elementwise op) in one pass over memory.
///
/// The output is cut into blocks of ``blockSize`` elements. For each block, operands are read
/// straight from memory when row-major, or gathered from their strided view into a block-long
/// slot. The block is then evaluated strip by strip (``stripSize`` elements): every step of the
/// region's ``HostProgram`` (a node of an instruction's expression, a hand-tuned op, or a multiply
/// and the add it feeds) runs as a vector loop over the strip, its result in a strip-long slot
/// that stays in L1, and the last one writes the output. Intermediates never leave the core's caches, and the reads of the
/// inputs are spread evenly over the arithmetic instead of coming in bursts that the
/// arithmetic-only instructions between them cannot hide. Registers hold `Float`; `Bool` values
/// are 0 or 1. Large outputs are split across threads.
///
/// A `Float` operand that repeats one contiguous run (a bias `[n]` broadcast to `[rows, n]`, see
/// ``period(of:)``) is laid out once per worker as that run repeated over a block's length, and
/// each block reads it in place from the right phase, instead of being gathered block by block.
///
/// Outputs of at least ``streamingOutputElements`` are written with streaming stores: they cannot
/// stay cached anyway, and a plain store first reads every line it writes.
struct ElementwiseEngine {
    static let blockSize = 4096

    /// Elements per instruction loop: 1 KiB of floats per slot, so a region's strip slots sit in
    /// L1. On the 16M-float chain, 6% faster than whole blocks; 128 and 512 measured the same.
    static let stripSize = 256

    /// Outputs this large (64 MiB of floats, twice the L3 of the machine this was tuned on) are
    /// written with streaming stores.
    static let streamingOutputElements = 1 << 24

    /// At most this many pieces per worker, of at least ``minimumPieceElements``.
    static let piecesPerWorker = 8

    /// The fewest elements a piece gets: a worker's set-up (its scratch, constant and tiled
    /// operands) is repeated per piece, and must stay small beside the piece's work.
    static let minimumPieceElements = 1 << 18

    /// Floats between one slot's end and the next's start (one 64-byte line, plus 16 floats more
    /// so that neighbouring slots also differ in their 128-byte pair): slots exactly 4 KiB apart
    /// look dependent to the CPU's memory disambiguation (4K aliasing) and stall the loops.
    static let slotPadding = 48

    let region: FusedRegion

    /// How a worker reads one operand for a block.
    private enum OperandSource {
        /// Row-major floats, read in place.
        case contiguous(UnsafePointer<Float>)
        /// One value, filled once per worker into the operand's slot.
        case constant
        /// A repeating run, tiled once per worker.
        case tiled(UnsafeMutablePointer<Float>, period: Int)
        /// Gathered from a strided view into the operand's slot, block by block.
        case strided(UnsafeRawPointer, StridedRuns, ScalarType)
    }

    func run(inputs: [Value], output: UnsafeMutableRawPointer, count: Int) throws(TensorError) {
        let program = HostPrograms.program(for: region)
        let flops = max(1, Int(program.flopsPerElement))
        var sources: [(pointer: UnsafeRawPointer, layout: Layout, type: ScalarType)] = []
        sources.reserveCapacity(inputs.count)
        for input in inputs {
            guard let buffer = input.buffer as? HostBuffer else {
                throw TensorError(.backendFailure, op: "fused", message: "a \(input.memorySpace) buffer reached the openblas backend")
            }
            sources.append((UnsafeRawPointer(buffer.pointer), input.layout, input.scalarType))
        }
        let workers = Parallel.workerCount(forElements: count, costPerElement: max(1, flops / 4))
        // Small outputs (scalars, short rows) need only as much scratch as they have elements.
        let block = max(1, min(Self.blockSize, count))
        let strip = min(Self.stripSize, block)
        let floatOutput = region.outputType == .float32
        let streaming = floatOutput && count >= Self.streamingOutputElements && Int(bitPattern: output) % 32 == 0
        // More pieces than workers, taken in turn by whichever worker is free: a core the machine
        // lends elsewhere for a while then delays only its current piece, not half the output.
        let pieces = workers == 1 ? 1 : Swift.max(workers, Swift.min(workers * Self.piecesPerWorker, count / Self.minimumPieceElements))
        Parallel.forEachRange(count, parts: pieces, alignment: Self.blockSize) { range in
            let worker = Worker(program: program, sources: sources, block: block, strip: strip)
            defer { worker.deallocate() }
            var start = range.lowerBound
            while start < range.upperBound {
                let length = min(block, range.upperBound - start)
                worker.load(block: start, length: length)
                var offset = 0
                while offset < length {
                    let n = min(strip, length - offset)
                    let direct = floatOutput && !streaming ? output.assumingMemoryBound(to: Float.self) + start + offset : nil
                    let result = worker.evaluate(offset: offset, count: n, into: direct)
                    if streaming {
                        Self.streamStore(result, output.assumingMemoryBound(to: Float.self) + start + offset, n)
                    } else if !floatOutput {
                        let out = output.assumingMemoryBound(to: Bool.self) + start + offset
                        for i in 0..<n { out[i] = result[i] != 0 }
                    }
                    offset += n
                }
                start += length
            }
            if streaming { te_store_fence() }
        }
    }

    /// Copies `n` floats to `out` (32-byte aligned) with streaming stores.
    private static func streamStore(_ values: UnsafePointer<Float>, _ out: UnsafeMutablePointer<Float>, _ n: Int) {
        var i = 0
        while i + 8 <= n {
            te_stream_store8(out + i, BlockKernels.load(values + i))
            i += 8
        }
        while i < n {
            out[i] = values[i]
            i += 1
        }
    }

    /// The longest run tiled per worker (256 KiB of floats).
    static let maximumTiledPeriod = 1 << 16

    /// The length of the run a layout repeats, when it is one: its trailing axes are row-major
    /// contiguous and every axis before them has stride 0 (or length 1). Element `i` of such a
    /// layout, in row-major order, is element `i % period` of the run at its offset.
    static func period(of layout: Layout) -> Int? {
        let (period, before) = layout.contiguousSuffix
        var axis = before
        while axis >= 0 {
            guard layout.strides[axis] == 0 || layout.shape[axis] == 1 else { return nil }
            axis -= 1
        }
        return period
    }

    /// One worker's scratch and operand bookkeeping: block-long slots for the operands that are
    /// gathered or constant, strip-long slots for the instructions' results.
    private struct Worker {
        let steps: [(step: VectorStep, register: Int)]
        let inputCount: Int
        let operands: [OperandSource]
        let scratch: UnsafeMutablePointer<Float>
        let inputSlotStride: Int
        /// Where each register's current values start: an operand's for the current block (a
        /// strip adds its offset), a literal's or a step's strip slot.
        let registers: UnsafeMutableBufferPointer<UnsafePointer<Float>>
        /// The registers for the current strip.
        let stripRegisters: UnsafeMutableBufferPointer<UnsafePointer<Float>>
        /// The allocation holding both register files.
        private let registerFiles: UnsafeMutableBufferPointer<UnsafePointer<Float>>

        init(program: HostProgram, sources: [(pointer: UnsafeRawPointer, layout: Layout, type: ScalarType)], block: Int, strip: Int) {
            steps = program.steps
            inputCount = program.inputCount
            inputSlotStride = block + ElementwiseEngine.slotPadding
            let stripSlotStride = strip + ElementwiseEngine.slotPadding
            let stripSlotCount = program.literals.count + program.steps.count
            scratch = .allocate(capacity: inputCount * inputSlotStride + stripSlotCount * stripSlotStride)
            // Both register files in one allocation (a fused step of a small graph is mostly this
            // setup): the strip's registers are the second half.
            registerFiles = UnsafeMutableBufferPointer<UnsafePointer<Float>>.allocate(
                capacity: 2 * program.registerCount)
            registerFiles.initialize(repeating: UnsafePointer(scratch))
            registers = UnsafeMutableBufferPointer(rebasing: registerFiles[..<program.registerCount])
            stripRegisters = UnsafeMutableBufferPointer(rebasing: registerFiles[program.registerCount...])
            var operands: [OperandSource] = []
            operands.reserveCapacity(sources.count)
            for (index, source) in sources.enumerated() {
                let slot = scratch + index * inputSlotStride
                if source.layout.strides.allSatisfy({ $0 == 0 }) {
                    slot.update(repeating: Self.load(source.pointer, source.type, source.layout.offset), count: block)
                    registers[index] = UnsafePointer(slot)
                    operands.append(.constant)
                } else if source.type == .float32, source.layout.isContiguous {
                    let base = source.pointer.assumingMemoryBound(to: Float.self) + source.layout.offset
                    operands.append(.contiguous(base))
                } else if source.type == .float32, let period = ElementwiseEngine.period(of: source.layout),
                          period > 0, period <= ElementwiseEngine.maximumTiledPeriod {
                    let run = source.pointer.assumingMemoryBound(to: Float.self) + source.layout.offset
                    let tile = UnsafeMutablePointer<Float>.allocate(capacity: period + block)
                    for start in stride(from: 0, to: period + block, by: period) {
                        (tile + start).update(from: run, count: min(period, period + block - start))
                    }
                    operands.append(.tiled(tile, period: period))
                } else {
                    registers[index] = UnsafePointer(slot)
                    operands.append(.strided(source.pointer, StridedRuns(layout: source.layout), source.type))
                }
            }
            self.operands = operands
            var stripSlot = scratch + inputCount * inputSlotStride
            for (register, value) in program.literals {
                stripSlot.update(repeating: value, count: strip)
                registers[register] = UnsafePointer(stripSlot)
                stripRegisters[register] = UnsafePointer(stripSlot)
                stripSlot += stripSlotStride
            }
            for (_, register) in steps {
                registers[register] = UnsafePointer(stripSlot)
                stripRegisters[register] = UnsafePointer(stripSlot)
                stripSlot += stripSlotStride
            }
        }

        func deallocate() {
            for case .tiled(let tile, _) in operands { tile.deallocate() }
            scratch.deallocate()
            registerFiles.deallocate()
        }

        /// Points the operand registers at the block of `length` elements from `start`.
        func load(block start: Int, length: Int) {
            for (index, operand) in operands.enumerated() {
                switch operand {
                case .contiguous(let base): registers[index] = base + start
                case .constant: break
                case .tiled(let tile, let period): registers[index] = UnsafePointer(tile + start % period)
                case .strided(let pointer, let runs, let type):
                    let slot = scratch + index * inputSlotStride
                    if type == .float32 {
                        runs.gather(pointer.assumingMemoryBound(to: Float.self), from: start, count: length, into: slot) { $0 }
                    } else {
                        runs.gather(pointer.assumingMemoryBound(to: Bool.self), from: start, count: length, into: slot) { $0 ? 1 : 0 }
                    }
                }
            }
        }

        /// Runs every step over `count` elements at `offset` in the current block, the last one
        /// into `output` when given; returns where the result is.
        func evaluate(offset: Int, count: Int, into output: UnsafeMutablePointer<Float>?) -> UnsafePointer<Float> {
            for index in 0..<inputCount { stripRegisters[index] = registers[index] + offset }
            let last = steps.count - 1
            for (index, (step, register)) in steps.enumerated() {
                let target = index == last ? output ?? UnsafeMutablePointer(mutating: registers[register]) : UnsafeMutablePointer(mutating: registers[register])
                BlockKernels.run(step, stripRegisters, target, count)
                stripRegisters[register] = UnsafePointer(target)
            }
            return stripRegisters[steps[last].register]
        }

        @inline(__always)
        private static func load(_ pointer: UnsafeRawPointer, _ type: ScalarType, _ offset: Int) -> Float {
            type == .bool ? (pointer.assumingMemoryBound(to: Bool.self)[offset] ? 1 : 0) : pointer.assumingMemoryBound(to: Float.self)[offset]
        }
    }
}
