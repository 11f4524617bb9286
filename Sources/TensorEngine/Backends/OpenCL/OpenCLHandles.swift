import COpenCL

// Typed owners of OpenCL objects: each holds one reference and releases it in `deinit`. OpenCL
// objects are thread-safe to retain, release and pass between threads (OpenCL 1.2, section A.2),
// hence `@unchecked Sendable`; setting kernel arguments is not, and the runtime serialises it.

/// An OpenCL context on one device.
final class CLContext: @unchecked Sendable {
    let raw: cl_context
    init(_ raw: cl_context) { self.raw = raw }
    deinit { clReleaseContext(raw) }
}

/// An in-order command queue.
final class CLQueue: @unchecked Sendable {
    let raw: cl_command_queue
    init(_ raw: cl_command_queue) { self.raw = raw }
    deinit { clReleaseCommandQueue(raw) }

    /// Waits for every enqueued command.
    func finish() throws(TensorError) { try checkCL(clFinish(raw), "clFinish") }
}

/// A built program.
final class CLProgram: @unchecked Sendable {
    let raw: cl_program
    init(_ raw: cl_program) { self.raw = raw }
    deinit { clReleaseProgram(raw) }
}

/// A kernel of a built program. Its arguments are set under the runtime's launch lock.
final class CLKernel: @unchecked Sendable {
    let raw: cl_kernel
    /// The program is kept alive as long as its kernels.
    let program: CLProgram
    init(_ raw: cl_kernel, program: CLProgram) {
        self.raw = raw
        self.program = program
    }
    deinit { clReleaseKernel(raw) }
}

/// A memory object (a buffer).
final class CLMem: @unchecked Sendable {
    let raw: cl_mem
    /// The size requested at creation, in bytes.
    let capacity: Int
    init(_ raw: cl_mem, capacity: Int) {
        self.raw = raw
        self.capacity = capacity
    }
    deinit { clReleaseMemObject(raw) }
}
