import COpenCL
import Synchronization

/// Where the runtime asks its fault hook before calling the driver.
package enum OpenCLFaultPoint: Sendable, Hashable {
    case allocation
    case build
    case enqueue
    /// Any other call that can fail (kernel and program creation, arguments, `clFinish`).
    case other
}

/// What makes a runtime's OpenCL calls fail on purpose, to test the paths a real driver failure
/// takes (the fault injector of `TensorEngineChecks` is one).
package protocol OpenCLFaultHook: AnyObject, Sendable {
    /// The code a call at `point` must fail with instead of reaching the driver, or `nil`.
    func failure(at point: OpenCLFaultPoint) -> cl_int?
}

/// A runtime's switch for a fault hook: off by default, and while off each guarded call costs
/// one atomic load. Each runtime has its own, so a test can fault a private runtime while other
/// tests use the shared one.
package final class OpenCLFaultSwitch: Sendable {
    private let armed = Atomic<Bool>(false)
    private let hook = Guarded<(any OpenCLFaultHook)?>(nil)

    /// Sends the runtime's calls through `hook` until ``remove()``.
    package func install(_ hook: any OpenCLFaultHook) {
        self.hook.withLock { $0 = hook }
        armed.store(true, ordering: .releasing)
    }

    /// Lets every call reach the driver again.
    package func remove() {
        armed.store(false, ordering: .releasing)
        hook.withLock { $0 = nil }
    }

    /// The code the call must fail with, or `nil`.
    func failure(at point: OpenCLFaultPoint) -> cl_int? {
        guard armed.load(ordering: .acquiring) else { return nil }
        return hook.withLock { $0 }?.failure(at: point)
    }
}

// The runtime's calls that can fail, each asking the fault switch first. Releases and info
// queries go to the table directly: they cannot be made to fail.
extension OpenCLRuntime {
    func createBuffer(
        _ flags: cl_mem_flags, _ bytes: Int, _ host: UnsafeMutableRawPointer?, _ status: inout cl_int
    ) -> cl_mem? {
        if let code = faults.failure(at: .allocation) {
            status = code
            return nil
        }
        return api.clCreateBuffer(context.raw, flags, bytes, host, &status)
    }

    func enqueueRead(_ mem: cl_mem, offset: Int = 0, bytes: Int, into host: UnsafeMutableRawPointer) -> cl_int {
        if let code = faults.failure(at: .enqueue) { return code }
        return api.clEnqueueReadBuffer(queue.raw, mem, cl_bool(CL_TRUE), offset, bytes, host, 0, nil, nil)
    }

    package func enqueueWrite(_ mem: cl_mem, bytes: Int, from host: UnsafeRawPointer) -> cl_int {
        if let code = faults.failure(at: .enqueue) { return code }
        return api.clEnqueueWriteBuffer(queue.raw, mem, cl_bool(CL_TRUE), 0, bytes, host, 0, nil, nil)
    }

    func enqueueMap(_ mem: cl_mem, bytes: Int, _ status: inout cl_int) -> UnsafeMutableRawPointer? {
        if let code = faults.failure(at: .enqueue) {
            status = code
            return nil
        }
        return api.clEnqueueMapBuffer(
            queue.raw, mem, cl_bool(CL_TRUE), cl_map_flags(CL_MAP_READ), 0, bytes, 0, nil, nil, &status)
    }

    func enqueueKernel(_ kernel: cl_kernel, global: [Int], local: [Int]?) -> cl_int {
        if let code = faults.failure(at: .enqueue) { return code }
        if let local {
            return api.clEnqueueNDRangeKernel(queue.raw, kernel, cl_uint(global.count), nil, global, local, 0, nil, nil)
        }
        return api.clEnqueueNDRangeKernel(queue.raw, kernel, cl_uint(global.count), nil, global, nil, 0, nil, nil)
    }

    func setKernelArg(_ kernel: cl_kernel, _ index: Int, _ size: Int, _ value: UnsafeRawPointer?) -> cl_int {
        if let code = faults.failure(at: .other) { return code }
        return api.clSetKernelArg(kernel, cl_uint(index), size, value)
    }

    func buildProgram(_ program: cl_program, options: String) -> cl_int {
        if let code = faults.failure(at: .build) { return code }
        var deviceID: cl_device_id? = device.id
        return api.clBuildProgram(program, 1, &deviceID, options, nil, nil)
    }

    func createKernel(_ program: cl_program, _ name: String, _ status: inout cl_int) -> cl_kernel? {
        if let code = faults.failure(at: .other) {
            status = code
            return nil
        }
        return api.clCreateKernel(program, name, &status)
    }

    /// Waits for every enqueued command.
    func finish() throws(TensorError) {
        if let code = faults.failure(at: .other) { try checkCL(code, "clFinish") }
        try checkCL(api.clFinish(queue.raw), "clFinish")
    }
}
