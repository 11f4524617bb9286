import TensorEngine
import COpenCL
import Foundation

/// Timings of the OpenCL backend's kernels on the device the engine uses, for `opencl-bench`.
///
/// Each figure times the kernels alone (inputs already on the device, a `clFinish` after the
/// repetitions), after one untimed run that builds the program.
package enum OpenCLBenchmarks {
    /// The device's name and driver, or `nil` when OpenCL is unavailable.
    package static var device: String? {
        (Engine.shared.backend(.opencl) as? OpenCLBackend).map { "\($0.runtime.device.name) (driver \($0.runtime.device.driverVersion)), matmul tiles \($0.matmulTuning)" }
    }

    private static func backend() throws(TensorError) -> OpenCLBackend {
        guard let backend = Engine.shared.backend(.opencl) as? OpenCLBackend else {
            throw TensorError(.unsupported, op: "bench", message: Engine.shared.unavailable.first { $0.id == .opencl }?.reason ?? "no OpenCL backend")
        }
        return backend
    }

    private static func hostValue(_ count: Int, seed: Float) throws(TensorError) -> Value {
        let buffer = try HostBuffer(byteCount: count * 4)
        let floats = buffer.elements(as: Float.self)
        for i in 0..<count { floats[i] = Float((i * 7919 + Int(seed * 13)) % 1000) / 500 - 1 }
        return Value(buffer: buffer, layout: Layout(contiguous: [count]), scalarType: .float32)
    }

    private static func time(_ repetitions: Int, _ backend: OpenCLBackend, _ body: () throws(TensorError) -> Void) throws(TensorError) -> Double {
        try body()
        try backend.synchronize()
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<repetitions { try body() }
        try backend.synchronize()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(repetitions)
    }

    /// GFLOP/s of an n x n x n float32 matmul.
    package static func matmulGFLOPS(size n: Int, repetitions: Int) throws(TensorError) -> Double {
        let backend = try backend()
        let a = try backend.upload(try hostValue(n * n, seed: 1).with(Layout(contiguous: [n, n])))
        let b = try backend.upload(try hostValue(n * n, seed: 2).with(Layout(contiguous: [n, n])))
        let output = TensorSignature(shape: [n, n], scalarType: .float32)
        let seconds = try time(repetitions, backend) { () throws(TensorError) in _ = try backend.execute(.op(.matmul), inputs: [a, b], output: output) }
        return 2 * Double(n * n * n) / seconds / 1e9
    }

    /// A matrix product run by code outside the engine on the engine's own queue and buffers:
    /// `(queue, a, b, c, n)` computes the row-major `c = a · b` of n x n float32 matrices and returns
    /// that library's status (0 for success). The queue is passed by address, as BLAS-style OpenCL
    /// libraries take it; it must not be released.
    package typealias ExternalSgemm = (_ queue: UnsafeMutablePointer<OpaquePointer?>, _ a: OpaquePointer, _ b: OpaquePointer,
                                       _ c: OpaquePointer, _ n: Int) -> Int32

    /// GFLOP/s of an n x n x n float32 matmul by an external library (`sgemm`) on the device, queue
    /// and input values ``matmulGFLOPS(size:repetitions:)`` uses, timed the same way after
    /// `warmups` untimed calls (a library's first call per size may compile or tune).
    package static func externalMatmulGFLOPS(size n: Int, repetitions: Int, warmups: Int, _ sgemm: ExternalSgemm) throws(TensorError) -> Double {
        let backend = try backend()
        let runtime = backend.runtime
        let a = try backend.deviceBuffer(try backend.upload(try hostValue(n * n, seed: 1)), op: "bench")
        let b = try backend.deviceBuffer(try backend.upload(try hostValue(n * n, seed: 2)), op: "bench")
        let c = try runtime.allocate(n * n * 4, op: "bench")
        var queue: OpaquePointer? = runtime.queue.raw
        func call() throws(TensorError) {
            let status = sgemm(&queue, a.mem.raw, b.mem.raw, c.mem.raw, n)
            guard status == 0 else { throw TensorError(.backendFailure, op: "bench", message: "the external sgemm returned status \(status)") }
        }
        for _ in 0..<max(0, warmups - 1) { try call() }
        return 2 * Double(n * n * n) / (try time(repetitions, backend, call)) / 1e9
    }

    /// GB/s (inputs read plus output written) of the fused region `relu(a * b + c) * 0.5 + tanh(a)`.
    package static func fusedChainGBPerSecond(count: Int, repetitions: Int, withTanh: Bool = true) throws(TensorError) -> Double {
        let backend = try backend()
        let a = try backend.upload(try hostValue(count, seed: 1))
        let b = try backend.upload(try hostValue(count, seed: 2))
        let c = try backend.upload(try hostValue(count, seed: 3))
        let half = try backend.upload(try hostValue(1, seed: 4).with(Layout(shape: [count], strides: [0], offset: 0)))
        let region = FusedRegion(
            inputTypes: [.float32, .float32, .float32, .float32],
            instructions: [
                .init(op: Op(.multiply), operands: [0, 1]), .init(op: Op(.add), operands: [4, 2]), .init(op: Op(.relu), operands: [5]),
                .init(op: Op(.multiply), operands: [6, 3]), .init(op: Op(withTanh ? .tanh : .negate), operands: [0]),
                .init(op: Op(.add), operands: [7, 8]),
            ],
            instructionTypes: Array(repeating: .float32, count: 6))
        let output = TensorSignature(shape: [count], scalarType: .float32)
        let seconds = try time(repetitions, backend) { () throws(TensorError) in _ = try backend.execute(.fused(region), inputs: [a, b, c, half], output: output) }
        return Double(count * 16) / seconds / 1e9
    }

    /// Seconds per launch of a one-element kernel: waited for each time, and queued in bulk.
    package static func launchLatency(repetitions: Int) throws(TensorError) -> (single: Double, queued: Double) {
        let backend = try backend()
        let x = try backend.upload(try hostValue(1, seed: 1))
        let output = TensorSignature(shape: [1], scalarType: .float32)
        let single = try time(repetitions, backend) { () throws(TensorError) in
            _ = try backend.execute(.op(Op(.negate)), inputs: [x], output: output)
            try backend.synchronize()
        }
        let queued = try time(repetitions, backend) { () throws(TensorError) in _ = try backend.execute(.op(Op(.negate)), inputs: [x], output: output) }
        return (single, queued)
    }

    /// GB/s of explicit host-to-device writes and device-to-host copies (`clEnqueueReadBuffer` into
    /// new host memory, what downloads did before mapping), of the zero-copy upload the backend uses
    /// on unified-memory devices (wrapping, no copy), and of a download as the backend does it
    /// (mapped on those devices), with the host value released after each.
    package static func transferGBPerSecond(bytes: Int, repetitions: Int) throws(TensorError)
        -> (toDevice: Double, toHost: Double, zeroCopyUpload: Double, download: Double)
    {
        let backend = try backend()
        let runtime = backend.runtime
        let host = try HostBuffer(byteCount: bytes)
        memset(host.pointer, 1, bytes)
        let device = try runtime.allocate(bytes, op: "bench")
        let write = try time(repetitions, backend) { () throws(TensorError) in
            try checkCL(runtime.enqueueWrite(device.mem.raw, bytes: bytes, from: host.pointer), "clEnqueueWriteBuffer")
        }
        let read = try time(repetitions, backend) { () throws(TensorError) in _ = try runtime.copyToHost(device, op: "bench") }
        let wrap = try time(repetitions, backend) { () throws(TensorError) in _ = try runtime.upload(host, op: "bench") }
        let download = try time(repetitions, backend) { () throws(TensorError) in _ = try runtime.download(device, op: "bench") }
        return (Double(bytes) / write / 1e9, Double(bytes) / read / 1e9, Double(bytes) / wrap / 1e9, Double(bytes) / download / 1e9)
    }
}
