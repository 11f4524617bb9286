import Foundation

/// The blocking of the tiled matmul kernel on one device: data, not constants in the source.
///
/// `forDevice` picks a row of a small table by device type and checks it against the device's
/// work-group and local-memory limits, falling back to smaller tiles; the environment variable
/// `TENSORENGINE_OPENCL_MATMUL_TUNING=tileM,tileN,tileK,wptM,wptN` overrides it for tuning runs.
package struct MatmulTuning: Sendable, Hashable, CustomStringConvertible {
    /// Which kernel of `matmul.cl`: tiles in local memory (GPUs), or register blocks read straight
    /// from cached memory (CPU devices, when B's rows are unit-stride; else the tiled kernel).
    enum Variant: String, Sendable, Hashable { case tiled, blocked }

    var variant: Variant = .tiled
    var tileM: Int
    var tileN: Int
    var tileK: Int
    var workPerItemM: Int
    var workPerItemN: Int

    var groupSize: (n: Int, m: Int) { (tileN / workPerItemN, tileM / workPerItemM) }
    var localBytes: Int { tileK * (tileM + tileN) * 4 }

    /// The blocked kernel's work-group: `tileN / workPerItemN` column panels by
    /// `tileM / workPerItemM` row blocks, halved until it fits the device.
    func blockedGroup(maxWorkGroupSize: Int) -> (n: Int, m: Int) {
        var n = max(1, tileN / workPerItemN)
        var m = max(1, tileM / workPerItemM)
        while n * m > maxWorkGroupSize {
            if n >= m { n = max(1, n / 2) } else { m = max(1, m / 2) }
        }
        return (n, m)
    }

    package var description: String { "\(variant) \(tileM)x\(tileN)x\(tileK)/\(workPerItemM)x\(workPerItemN)" }

    /// Candidates, best first, by device type (measured on PoCL for CPUs; the usual GPU blocking otherwise).
    static func table(for type: OpenCLDeviceInfo.DeviceType) -> [MatmulTuning] {
        switch type {
        case .cpu:
            [MatmulTuning(variant: .blocked, tileM: 48, tileN: 128, tileK: 16, workPerItemM: 6, workPerItemN: 16),
             MatmulTuning(tileM: 32, tileN: 32, tileK: 16, workPerItemM: 4, workPerItemN: 4)]
        case .gpu, .accelerator, .other:
            [MatmulTuning(tileM: 64, tileN: 64, tileK: 16, workPerItemM: 4, workPerItemN: 4),
             MatmulTuning(tileM: 32, tileN: 32, tileK: 16, workPerItemM: 2, workPerItemN: 2)]
        }
    }

    /// A safe last resort: 8 x 8 work-items, one output each.
    static let minimal = MatmulTuning(tileM: 8, tileN: 8, tileK: 8, workPerItemM: 1, workPerItemN: 1)

    func fits(_ device: OpenCLDeviceInfo) -> Bool {
        let (n, m) = groupSize
        // The blocked kernel keeps each row's columns as float8 vectors.
        let columnsFit = switch variant {
        case .tiled: true
        case .blocked: workPerItemN % 8 == 0
        }
        return columnsFit && tileM % workPerItemM == 0 && tileN % workPerItemN == 0 && n * m <= device.maxWorkGroupSize
            && localBytes <= device.localMemoryBytes
    }

    static func forDevice(_ device: OpenCLDeviceInfo) -> MatmulTuning {
        if let text = ProcessInfo.processInfo.environment["TENSORENGINE_OPENCL_MATMUL_TUNING"] {
            let values = text.split(separator: ",").dropFirst(text.hasPrefix("blocked") ? 1 : 0).compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            if values.count == 5, values.allSatisfy({ $0 > 0 }) {
                let variant: Variant = text.hasPrefix("blocked") ? .blocked : .tiled
                let custom = MatmulTuning(variant: variant, tileM: values[0], tileN: values[1], tileK: values[2], workPerItemM: values[3], workPerItemN: values[4])
                if custom.fits(device) { return custom }
            }
        }
        return table(for: device.type).first { $0.fits(device) } ?? minimal
    }

    func options(_ type: ScalarType, fma: Bool) -> BuildOptions {
        var options = BuildOptions([
            "TILE_M": "\(tileM)", "TILE_N": "\(tileN)", "TILE_K": "\(tileK)", "WPT_M": "\(workPerItemM)",
            "WPT_N": "\(workPerItemN)", "TE_USE_FMA": fma ? "1" : "0",
        ])
        options.input(type)
        options.output(type)
        return options
    }
}

/// A matrix operand as the kernels read it: element (i, p) of batch b is at
/// `offset + (b / inner) · outer + (b % inner) · innerStride + i · row + p · column`, where `inner`
/// is the product's inner batch extent. Two batch strides cover attention's products over
/// [batch, heads] of head-split views without a copy.
private struct MatrixOperand {
    var buffer: OpenCLBuffer
    var offset: Int32
    var outer: Int32
    var inner: Int32
    var row: Int32
    var column: Int32

    var arguments: [KernelArgument] { [.buffer(buffer), .int(offset), .int(outer), .int(inner), .int(row), .int(column)] }
    /// Whether every batch reads the same matrix (a broadcast operand).
    var isBroadcast: Bool { outer == 0 && inner == 0 }
}

extension OpenCLBackend {
    /// The operands of a product over `batchShape`, with their batch axes merged into at most two
    /// (outer, inner) levels common to both; operands whose axes do not merge that far are first
    /// copied to row-major. Returns them and the inner extent.
    private func matrices(_ a: Value, _ b: Value, batchShape: [Int], op: String) throws(TensorError) -> (MatrixOperand, MatrixOperand, inner: Int) {
        func batchLayout(_ value: Value) -> Layout {
            Layout(shape: batchShape, strides: Array(value.layout.strides.dropLast(2)), offset: 0)
        }
        var (a, b) = (a, b)
        var merged = KernelLayout(shape: batchShape, layouts: [batchLayout(a), batchLayout(b)])
        if merged.rank > 2 {
            for index in 0..<2 {
                let value = index == 0 ? a : b
                guard !value.layout.isContiguous else { continue }
                let (copy, target) = try allocate(TensorSignature(shape: value.shape, scalarType: value.scalarType), op: op)
                try self.copy(value, into: target, layout: copy.layout)
                if index == 0 { a = copy } else { b = copy }
            }
            merged = KernelLayout(shape: batchShape, layouts: [batchLayout(a), batchLayout(b)])
        }
        func operand(_ value: Value, _ index: Int) throws(TensorError) -> MatrixOperand {
            let strides = value.layout.strides
            let rank = strides.count
            return MatrixOperand(
                buffer: try deviceBuffer(value, op: op), offset: Int32(truncatingIfNeeded: value.layout.offset),
                outer: merged.strides[index][6], inner: merged.strides[index][7],
                row: Int32(truncatingIfNeeded: strides[rank - 2]), column: Int32(truncatingIfNeeded: strides[rank - 1]))
        }
        return (try operand(a, 0), try operand(b, 1), Int(merged.shape[7]))
    }

    func matmul(_ a: Value, _ b: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, op: "matmul")
        guard output.elementCount > 0 else { return result }
        let rank = a.shape.count
        let (m, k, n) = (a.shape[rank - 2], a.shape[rank - 1], b.shape[rank - 1])
        let batchShape = Array(output.shape.dropLast(2))
        let batches = batchShape.reduce(1, *)
        guard k > 0 else {
            try fill(out, type: output.scalarType, bits: 0, count: output.elementCount)
            return result
        }
        let (left, right, inner) = try matrices(a, b, batchShape: batchShape, op: "matmul")
        let tuning = matmulTuning
        let shape = (m: m, n: n, k: k, batches: batches, inner: inner)
        if try blockedMatmul(tuning, shape, left, right, into: out, type: a.scalarType) { return result }
        let kernel = try runtime.kernel(.matmulTiled, family: .matmul, options: tuning.options(a.scalarType, fma: runtime.device.hasFMA))
        let (groupN, groupM) = tuning.groupSize
        let global = [(n + tuning.tileN - 1) / tuning.tileN * groupN, (m + tuning.tileM - 1) / tuning.tileM * groupM, batches]
        try runtime.launch(kernel, [.int(Int32(m)), .int(Int32(n)), .int(Int32(k)), .int(Int32(inner))] + left.arguments + right.arguments + [.buffer(out)],
                           global: global, local: [groupN, groupM, 1])
        return result
    }

    /// The blocked kernel, when the tuning selects it and it applies; `false` leaves the product
    /// to the tiled kernel. B is first packed into column panels (`matmul_pack_b`) when more than
    /// one tile of rows reads it, or when its rows are not unit-stride: unpacked, each step of a
    /// work-item's K loop reads another page of B. A single tile of rows (a vector-matrix product,
    /// say) reads B once, so packing would only double its traffic.
    private func blockedMatmul(_ tuning: MatmulTuning, _ shape: (m: Int, n: Int, k: Int, batches: Int, inner: Int),
                               _ left: MatrixOperand, _ right: MatrixOperand,
                               into out: OpenCLBuffer, type: ScalarType) throws(TensorError) -> Bool {
        guard tuning.variant == .blocked else { return false }
        let (m, n, k, batches, inner) = shape
        let width = tuning.workPerItemN
        let (panels, blocks) = ((n + width - 1) / width, (m + tuning.workPerItemM - 1) / tuning.workPerItemM)
        let packedBatches = right.isBroadcast ? 1 : batches
        let packedCount = packedBatches * panels * width * k
        let pack = (m > tuning.tileM || right.column != 1) && packedCount < Int(Int32.max)
        guard pack || right.column == 1 || n == 1 else { return false }
        let options = tuning.options(type, fma: runtime.device.hasFMA)
        // Unpacked, column panel j of B starts `width` columns after panel j - 1.
        var source = right
        var panelStride = Int32(width)
        if pack {
            let packed = try runtime.allocate(packedCount * type.byteCount, op: "matmul")
            let packKernel = try runtime.kernel(.matmulPackB, family: .matmul, options: options)
            try runtime.launch(packKernel, [.int(Int32(k)), .int(Int32(n)), .int(Int32(inner))] + right.arguments + [.buffer(packed)],
                               global: [panels * width, k, packedBatches])
            // Packed: batch after batch, each `panels` panels of k rows of `width` values.
            let panelSize = Int32(k * width)
            let batchSize = right.isBroadcast ? 0 : Int32(panels) * panelSize
            source = MatrixOperand(buffer: packed, offset: 0, outer: batchSize * Int32(inner), inner: batchSize, row: Int32(width), column: 1)
            panelStride = panelSize
        }
        // A work-group covers groupN column panels x groupM row blocks, so the panels of B and
        // rows of A it reads stay in cache while its work-items reuse them.
        let (groupN, groupM) = tuning.blockedGroup(maxWorkGroupSize: runtime.device.maxWorkGroupSize)
        let kernel = try runtime.kernel(.matmulBlocked, family: .matmul, options: options)
        try runtime.launch(kernel, [.int(Int32(m)), .int(Int32(n)), .int(Int32(k)), .int(Int32(inner))] + left.arguments
                           + [.buffer(source.buffer), .int(source.offset), .int(source.outer), .int(source.inner), .int(source.row), .int(panelStride),
                              .buffer(out)],
                           global: [(panels + groupN - 1) / groupN * groupN, (blocks + groupM - 1) / groupM * groupM, batches], local: [groupN, groupM, 1])
        return true
    }
}
