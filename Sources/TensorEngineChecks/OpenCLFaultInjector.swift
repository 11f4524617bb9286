import COpenCL
import TensorEngine

/// A failure the OpenCL runtime can be told to simulate, to test the paths a real driver failure
/// takes. Counts start at 1 when the fault is injected.
package enum OpenCLFault: Sendable, Hashable {
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

/// Makes a runtime's OpenCL calls fail on purpose, as a fault scenario says (tests only):
/// installed in a runtime's ``OpenCLFaultSwitch`` by ``inject(_:into:)``.
package final class OpenCLFaultInjector: OpenCLFaultHook {
    private struct State {
        var fault: OpenCLFault?
        var calls: [OpenCLFaultPoint: Int] = [:]
        var deviceLost = false
        var failuresInjected = 0
    }

    private let state = Guarded(State())

    package init() {}

    /// Starts simulating `fault` (replacing any earlier one) on `faults`, with fresh call counts.
    package func inject(_ fault: OpenCLFault, into faults: OpenCLFaultSwitch) {
        state.withLock { $0 = State(fault: fault) }
        faults.install(self)
    }

    /// Stops simulating faults on `faults`: calls reach the driver again.
    package func disarm(_ faults: OpenCLFaultSwitch) {
        faults.remove()
        state.withLock { $0 = State() }
    }

    /// How many calls failed on purpose since the last ``inject(_:into:)``.
    package var failuresInjected: Int { state.withLock { $0.failuresInjected } }

    package func failure(at point: OpenCLFaultPoint) -> cl_int? {
        state.withLock { state in
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
