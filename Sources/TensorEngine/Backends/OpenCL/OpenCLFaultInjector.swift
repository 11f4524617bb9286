import COpenCL
import Synchronization

/// A failure the OpenCL runtime can be told to simulate, to test the paths a real driver failure
/// takes. Counts start at 1 when the fault is injected.
enum OpenCLFault: Sendable, Hashable {
    /// Buffer allocations (`clCreateBuffer`) number `nth` to `nth + times - 1` fail with
    /// `CL_MEM_OBJECT_ALLOCATION_FAILURE`.
    case allocation(nth: Int, times: Int = 1)
    /// Program builds (`clBuildProgram`, from source or from a cached binary) number `nth` to
    /// `nth + times - 1` fail with `CL_BUILD_PROGRAM_FAILURE`.
    case build(nth: Int, times: Int = 1)
    /// Enqueues (kernel launches, buffer reads and writes, maps) number `nth` to `nth + times - 1`
    /// fail with `CL_OUT_OF_RESOURCES`.
    case enqueue(nth: Int, times: Int = 1)
    /// The device is lost after `afterEnqueues` enqueues succeed: from then on every call except
    /// releases fails with `CL_DEVICE_NOT_AVAILABLE`, until the injector is disarmed.
    case deviceLost(afterEnqueues: Int)
}

/// Where the runtime asks the injector before calling the driver.
enum OpenCLFaultPoint: Sendable, Hashable {
    case allocation
    case build
    case enqueue
    /// Any other call that can fail (kernel and program creation, arguments, `clFinish`).
    case other
}

/// An internal switch that makes a runtime's OpenCL calls fail on purpose (tests only).
///
/// Off by default; while off, each guarded call costs one atomic load. Each runtime has its own
/// injector, so a test can fault a private runtime while other tests use the shared one.
final class OpenCLFaultInjector: Sendable {
    private struct State {
        var fault: OpenCLFault?
        var calls: [OpenCLFaultPoint: Int] = [:]
        var deviceLost = false
        var failuresInjected = 0
    }

    private let armed = Atomic<Bool>(false)
    private let state = Guarded(State())

    /// Starts simulating `fault` (replacing any earlier one), with fresh call counts.
    func inject(_ fault: OpenCLFault) {
        state.withLock { $0 = State(fault: fault) }
        armed.store(true, ordering: .releasing)
    }

    /// Stops simulating faults: calls reach the driver again.
    func disarm() {
        armed.store(false, ordering: .releasing)
        state.withLock { $0 = State() }
    }

    /// How many calls failed on purpose since the last ``inject(_:)``.
    var failuresInjected: Int { state.withLock { $0.failuresInjected } }

    /// The code a call at `point` must fail with instead of reaching the driver, or `nil`.
    func failure(at point: OpenCLFaultPoint) -> cl_int? {
        guard armed.load(ordering: .acquiring) else { return nil }
        return state.withLock { state in
            let code = Self.failure(at: point, state: &state)
            if code != nil { state.failuresInjected += 1 }
            return code
        }
    }

    private static func failure(at point: OpenCLFaultPoint, state: inout State) -> cl_int? {
        if state.deviceLost { return CL_DEVICE_NOT_AVAILABLE }
        guard let fault = state.fault else { return nil }
        let count = state.calls[point, default: 0] + 1
        state.calls[point] = count
        switch fault {
        case .allocation(let nth, let times):
            return point == .allocation && count >= nth && count < nth + times ? CL_MEM_OBJECT_ALLOCATION_FAILURE : nil
        case .build(let nth, let times):
            return point == .build && count >= nth && count < nth + times ? CL_BUILD_PROGRAM_FAILURE : nil
        case .enqueue(let nth, let times):
            return point == .enqueue && count >= nth && count < nth + times ? CL_OUT_OF_RESOURCES : nil
        case .deviceLost(let afterEnqueues):
            guard point == .enqueue, count > afterEnqueues else { return nil }
            state.deviceLost = true
            return CL_DEVICE_NOT_AVAILABLE
        }
    }
}

// The runtime's calls that can fail, each asking the fault injector first. Releases and info
// queries go to the table directly: they cannot be made to fail.
extension OpenCLRuntime {
    func createBuffer(_ flags: cl_mem_flags, _ bytes: Int, _ host: UnsafeMutableRawPointer?, _ status: inout cl_int) -> cl_mem? {
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

    func enqueueWrite(_ mem: cl_mem, bytes: Int, from host: UnsafeRawPointer) -> cl_int {
        if let code = faults.failure(at: .enqueue) { return code }
        return api.clEnqueueWriteBuffer(queue.raw, mem, cl_bool(CL_TRUE), 0, bytes, host, 0, nil, nil)
    }

    func enqueueMap(_ mem: cl_mem, bytes: Int, _ status: inout cl_int) -> UnsafeMutableRawPointer? {
        if let code = faults.failure(at: .enqueue) {
            status = code
            return nil
        }
        return api.clEnqueueMapBuffer(queue.raw, mem, cl_bool(CL_TRUE), cl_map_flags(CL_MAP_READ), 0, bytes, 0, nil, nil, &status)
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
