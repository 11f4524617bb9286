import Foundation
import COpenCL

/// One argument of a kernel launch.
package enum KernelArgument {
    case buffer(OpenCLBuffer)
    case int(Int32)
    case uint(UInt32)
    case float(Float)
    /// An `int8` vector: a right-aligned shape or strides (see `common.cl`).
    case int8(SIMD8<Int32>)
}

extension OpenCLRuntime {
    /// Sets the arguments and enqueues a kernel; returns at once (the queue is in order). A launch
    /// with no work does nothing.
    func launch(_ kernel: CLKernel, _ arguments: [KernelArgument], global: [Int], local: [Int]? = nil) throws(TensorError) {
        guard global.allSatisfy({ $0 > 0 }) else { return }
        try launchLock.withLock { (_: inout Void) throws(TensorError) in
            for (index, argument) in arguments.enumerated() {
                let status: cl_int
                switch argument {
                case .buffer(let buffer):
                    var raw: cl_mem? = buffer.mem.raw
                    status = setKernelArg(kernel.raw, index, MemoryLayout<cl_mem?>.size, &raw)
                case .int(var value):
                    status = setKernelArg(kernel.raw, index, 4, &value)
                case .uint(var value):
                    status = setKernelArg(kernel.raw, index, 4, &value)
                case .float(var value):
                    status = setKernelArg(kernel.raw, index, 4, &value)
                case .int8(let vector):
                    status = withUnsafeBytes(of: vector) { setKernelArg(kernel.raw, index, 32, $0.baseAddress) }
                }
                try checkCL(status, "clSetKernelArg(\(index))")
            }
            try checkCL(enqueueKernel(kernel.raw, global: global, local: local), "clEnqueueNDRangeKernel")
        }
    }

    /// The work-group size of 1-D elementwise launches: large on CPU devices, where each work-group
    /// costs a scheduling step (PoCL runs a group's items as one vectorised loop), 256 elsewhere.
    /// `TENSORENGINE_OPENCL_STREAM_GROUP` overrides it for tuning runs (read with `getenv`: this
    /// runs on every launch, and `ProcessInfo.environment` copies the whole environment).
    var streamGroupSize: Int {
        if let raw = getenv("TENSORENGINE_OPENCL_STREAM_GROUP"), let size = Int(String(cString: raw)), size > 0 {
            return size
        }
        return device.type == .cpu ? 1024 : 256
    }

    /// A 1-D launch over `count` items in work-groups of `group` (default ``streamGroupSize``; the
    /// global size is rounded up and the kernels check their index against the count).
    func launch1D(_ kernel: CLKernel, _ arguments: [KernelArgument], count: Int, group: Int? = nil) throws(TensorError) {
        // A short launch takes the next power of two, not its own count, as its work-group size:
        // PoCL compiles a kernel again for each work-group size it meets, and a decoder's rows
        // are one longer every step.
        let largest = max(1, min(group ?? streamGroupSize, device.maxWorkGroupSize))
        var size = largest
        if count < largest {
            size = 1
            while size < count { size *= 2 }
            size = min(size, largest)
        }
        try launch(kernel, arguments, global: [(count + size - 1) / size * size], local: [size])
    }
}

/// A strided layout in the form the kernels take: rank after merging axes, and right-aligned
/// `int8` shape and strides (see `common.cl`).
struct KernelLayout {
    static let maxRank = 8

    var rank: Int
    var shape: SIMD8<Int32>
    var strides: [SIMD8<Int32>]
    var offsets: [Int32]

    /// Merges the axes of `layouts` (one shape, several strides): size-1 axes are dropped and
    /// neighbours merged where every operand steps through them as one axis.
    init(shape fullShape: [Int], layouts: [Layout]) {
        var shape: [Int] = []
        var strides: [[Int]] = Array(repeating: [], count: layouts.count)
        for axis in fullShape.indices where fullShape[axis] != 1 {
            let mergeable = !shape.isEmpty && layouts.indices.allSatisfy { operand in
                strides[operand][strides[operand].count - 1] == layouts[operand].strides[axis] * fullShape[axis]
            }
            if mergeable {
                shape[shape.count - 1] *= fullShape[axis]
                for operand in layouts.indices { strides[operand][strides[operand].count - 1] = layouts[operand].strides[axis] }
            } else {
                shape.append(fullShape[axis])
                for operand in layouts.indices { strides[operand].append(layouts[operand].strides[axis]) }
            }
        }
        self.rank = shape.count
        self.shape = Self.vector(shape, fill: 1)
        self.strides = strides.map { Self.vector($0, fill: 0) }
        self.offsets = layouts.map { Int32(truncatingIfNeeded: $0.offset) }
    }

    /// Right-aligns up to eight values; the rest take `fill`.
    static func vector(_ values: [Int], fill: Int32) -> SIMD8<Int32> {
        var vector = SIMD8<Int32>(repeating: fill)
        for (i, value) in values.suffix(8).enumerated() { vector[8 - min(values.count, 8) + i] = Int32(truncatingIfNeeded: value) }
        return vector
    }
}
