import COpenCL
import Synchronization

// Typed owners of OpenCL objects: each holds one reference and releases it in `deinit`, through
// the entry-point table it was created with. OpenCL objects are thread-safe to retain, release and
// pass between threads (OpenCL 1.2, section A.2), hence `@unchecked Sendable`; setting kernel
// arguments is not, and the runtime serialises it.

/// An OpenCL context on one device.
final class CLContext: @unchecked Sendable {
    let raw: cl_context
    let api: OpenCLAPI
    init(_ raw: cl_context, api: OpenCLAPI) {
        self.raw = raw
        self.api = api
    }
    deinit { _ = api.clReleaseContext(raw) }
}

/// An in-order command queue.
package final class CLQueue: @unchecked Sendable {
    package let raw: cl_command_queue
    let api: OpenCLAPI
    init(_ raw: cl_command_queue, api: OpenCLAPI) {
        self.raw = raw
        self.api = api
    }
    deinit { _ = api.clReleaseCommandQueue(raw) }
}

/// A built program.
final class CLProgram: @unchecked Sendable {
    let raw: cl_program
    let api: OpenCLAPI
    init(_ raw: cl_program, api: OpenCLAPI) {
        self.raw = raw
        self.api = api
    }
    deinit { _ = api.clReleaseProgram(raw) }
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
    deinit { _ = program.api.clReleaseKernel(raw) }
}

/// The number of device memory objects of a runtime that exist (created and not yet released),
/// pooled ones included: what tests compare before and after a graph to find leaks.
final class OpenCLLiveBuffers: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .acquiring) }
    func created() { count.add(1, ordering: .relaxed) }
    func released() { count.subtract(1, ordering: .relaxed) }
}

/// A memory object (a buffer), counted in its runtime's ``OpenCLLiveBuffers`` while it exists.
package final class CLMem: @unchecked Sendable {
    package let raw: cl_mem
    /// The size requested at creation, in bytes.
    let capacity: Int
    private let api: OpenCLAPI
    private let live: OpenCLLiveBuffers
    init(_ raw: cl_mem, capacity: Int, api: OpenCLAPI, live: OpenCLLiveBuffers) {
        self.raw = raw
        self.capacity = capacity
        self.api = api
        self.live = live
        live.created()
    }
    deinit {
        _ = api.clReleaseMemObject(raw)
        live.released()
    }
}
