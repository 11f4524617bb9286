import Foundation

/// The blocking of the tiled matmul kernel on one device: data, not constants in the source.
///
/// `forDevice` picks a row of a small table by device type and checks it against the device's
/// work-group and local-memory limits, falling back to smaller tiles; the environment variable
/// `TENSORENGINE_OPENCL_MATMUL_TUNING=tileM,tileN,tileK,wptM,wptN` overrides it for tuning runs.
struct MatmulTuning: Sendable, Hashable, CustomStringConvertible {
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

    var description: String { "\(variant) \(tileM)x\(tileN)x\(tileK)/\(workPerItemM)x\(workPerItemN)" }

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

extension OpenCLBackend {
    /// A matrix operand as the kernel reads it: buffer, offset, and strides per batch, row and column.
    private func matrix(_ value: Value, op: String) throws(TensorError) -> (OpenCLBuffer, [Int32]) {
        let rank = value.shape.count
        let batchShape = Array(value.shape.dropLast(2))
        let batch = KernelLayout(shape: batchShape, layouts: [Layout(shape: batchShape, strides: Array(value.layout.strides.dropLast(2)), offset: 0)])
        var source = value
        var buffer = try deviceBuffer(value, op: op)
        if batch.rank > 1 {
            // Batch axes that do not merge into one stride: copy to row-major first.
            let (copy, target) = try allocate(TensorSignature(shape: value.shape, scalarType: value.scalarType), op: op)
            try self.copy(value, into: target, layout: copy.layout)
            source = copy
            buffer = target
        }
        let merged = KernelLayout(shape: batchShape, layouts: [Layout(shape: batchShape, strides: Array(source.layout.strides.dropLast(2)), offset: 0)])
        let strides = source.layout.strides
        return (buffer, [Int32(truncatingIfNeeded: source.layout.offset), merged.strides[0][7],
                         Int32(truncatingIfNeeded: strides[rank - 2]), Int32(truncatingIfNeeded: strides[rank - 1])])
    }

    func matmul(_ a: Value, _ b: Value, _ output: TensorSignature) throws(TensorError) -> Value {
        let (result, out) = try allocate(output, op: "matmul")
        guard output.elementCount > 0 else { return result }
        let rank = a.shape.count
        let (m, k, n) = (a.shape[rank - 2], a.shape[rank - 1], b.shape[rank - 1])
        let batches = a.shape.dropLast(2).reduce(1, *)
        guard k > 0 else {
            try fill(out, type: output.scalarType, bits: 0, count: output.elementCount)
            return result
        }
        let (aBuffer, aLayout) = try matrix(a, op: "matmul")
        let (bBuffer, bLayout) = try matrix(b, op: "matmul")
        let tuning = matmulTuning
        let shape = (m: m, n: n, k: k, batches: batches)
        if try blockedMatmul(tuning, shape, aBuffer, aLayout, bBuffer, bLayout, into: out, type: a.scalarType) { return result }
        let kernel = try runtime.kernel(.matmulTiled, family: .matmul, options: tuning.options(a.scalarType, fma: runtime.device.hasFMA))
        let (groupN, groupM) = tuning.groupSize
        let global = [(n + tuning.tileN - 1) / tuning.tileN * groupN, (m + tuning.tileM - 1) / tuning.tileM * groupM, batches]
        try runtime.launch(kernel, [
            .int(Int32(m)), .int(Int32(n)), .int(Int32(k)),
            .buffer(aBuffer), .int(aLayout[0]), .int(aLayout[1]), .int(aLayout[2]), .int(aLayout[3]),
            .buffer(bBuffer), .int(bLayout[0]), .int(bLayout[1]), .int(bLayout[2]), .int(bLayout[3]),
            .buffer(out),
        ], global: global, local: [groupN, groupM, 1])
        return result
    }

    /// The blocked kernel, when the tuning selects it and it applies; `false` leaves the product
    /// to the tiled kernel. B is first packed into column panels (`matmul_pack_b`) when more than
    /// one tile of rows reads it, or when its rows are not unit-stride: unpacked, each step of a
    /// work-item's K loop reads another page of B. A single tile of rows (a vector-matrix product,
    /// say) reads B once, so packing would only double its traffic.
    private func blockedMatmul(_ tuning: MatmulTuning, _ shape: (m: Int, n: Int, k: Int, batches: Int),
                               _ aBuffer: OpenCLBuffer, _ aLayout: [Int32], _ bBuffer: OpenCLBuffer, _ bLayout: [Int32],
                               into out: OpenCLBuffer, type: ScalarType) throws(TensorError) -> Bool {
        guard tuning.variant == .blocked else { return false }
        let (m, n, k, batches) = shape
        let width = tuning.workPerItemN
        let (panels, blocks) = ((n + width - 1) / width, (m + tuning.workPerItemM - 1) / tuning.workPerItemM)
        let packedBatches = bLayout[1] == 0 ? 1 : batches
        let packedCount = packedBatches * panels * width * k
        let pack = (m > tuning.tileM || bLayout[3] != 1) && packedCount < Int(Int32.max)
        guard pack || bLayout[3] == 1 || n == 1 else { return false }
        let options = tuning.options(type, fma: runtime.device.hasFMA)
        var (source, layout) = (bBuffer, [bLayout[0], bLayout[1], bLayout[2], Int32(width)])
        if pack {
            let packed = try runtime.allocate(packedCount * type.byteCount, op: "matmul")
            let packKernel = try runtime.kernel(.matmulPackB, family: .matmul, options: options)
            try runtime.launch(packKernel, [
                .int(Int32(k)), .int(Int32(n)),
                .buffer(bBuffer), .int(bLayout[0]), .int(bLayout[1]), .int(bLayout[2]), .int(bLayout[3]),
                .buffer(packed),
            ], global: [panels * width, k, packedBatches])
            let panelSize = Int32(k * width)
            (source, layout) = (packed, [0, bLayout[1] == 0 ? 0 : Int32(panels) * panelSize, Int32(width), panelSize])
        }
        // A work-group covers groupN column panels x groupM row blocks, so the panels of B and
        // rows of A it reads stay in cache while its work-items reuse them.
        let (groupN, groupM) = tuning.blockedGroup(maxWorkGroupSize: runtime.device.maxWorkGroupSize)
        let kernel = try runtime.kernel(.matmulBlocked, family: .matmul, options: options)
        try runtime.launch(kernel, [
            .int(Int32(m)), .int(Int32(n)), .int(Int32(k)),
            .buffer(aBuffer), .int(aLayout[0]), .int(aLayout[1]), .int(aLayout[2]), .int(aLayout[3]),
            .buffer(source), .int(layout[0]), .int(layout[1]), .int(layout[2]), .int(layout[3]),
            .buffer(out),
        ], global: [(panels + groupN - 1) / groupN * groupN, (blocks + groupM - 1) / groupM * groupM, batches], local: [groupN, groupM, 1])
        return true
    }
}
