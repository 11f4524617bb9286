import COpenCL
import Synchronization

/// A buffer in an OpenCL device's memory, holding a tensor's elements.
///
/// Fresh buffers come from the device's pool and go back to it when the last value using them is
/// released. Commands run in order on one queue, so a recycled buffer is only rewritten after every
/// earlier command that read it.
package final class OpenCLBuffer: DeviceBuffer, @unchecked Sendable {
    package let mem: CLMem
    package let byteCount: Int
    package let memorySpace: MemorySpace
    package let growth: GrowthCursor?
    private let pool: OpenCLBufferPool?

    init(mem: CLMem, byteCount: Int, memorySpace: MemorySpace, pool: OpenCLBufferPool?, growth: GrowthCursor? = nil) {
        self.mem = mem
        self.byteCount = byteCount
        self.memorySpace = memorySpace
        self.pool = pool
        self.growth = growth
    }

    deinit { pool?.recycle(mem) }
}

/// Released device buffers kept for reuse, by capacity class, up to a byte limit.
final class OpenCLBufferPool: Sendable {
    private struct State {
        var free: [Int: [CLMem]] = [:]
        var bytes = 0
    }

    private let state = Guarded(State())
    /// The most bytes kept idle; beyond it, released buffers are freed.
    let limitBytes: Int

    init(limitBytes: Int) { self.limitBytes = limitBytes }

    /// The capacity class of a request: the next of 2^k or 1.5 * 2^k (at most a third wasted), at least 256 bytes.
    static func capacity(for bytes: Int) -> Int {
        var size = 256
        while size < bytes {
            let between = size + size / 2
            if between >= bytes { return between }
            size *= 2
        }
        return size
    }

    func take(capacity: Int) -> CLMem? {
        state.withLock { state in
            guard var list = state.free[capacity], let mem = list.popLast() else { return nil }
            state.free[capacity] = list
            state.bytes -= capacity
            return mem
        }
    }

    func recycle(_ mem: CLMem) {
        state.withLock { state in
            guard state.bytes + mem.capacity <= limitBytes else { return }
            state.free[mem.capacity, default: []].append(mem)
            state.bytes += mem.capacity
        }
    }

    /// Frees every idle buffer (before retrying an allocation that ran out of memory).
    func drain() {
        state.withLock { state in
            state.free = [:]
            state.bytes = 0
        }
    }

    var idleBytes: Int { state.withLock { $0.bytes } }

    /// The number of idle buffers kept.
    var idleCount: Int { state.withLock { $0.free.values.reduce(0) { $0 + $1.count } } }
}

extension OpenCLRuntime {
    var memorySpace: MemorySpace { .openCL(device: device.index) }

    /// Device buffers of this runtime that exist now, idle pooled ones included (``drainPool()``
    /// first to count only buffers in use).
    var liveBufferCount: Int { liveBuffers.value }

    /// Frees every idle pooled buffer.
    func drainPool() { pool.drain() }

    /// A device buffer of at least `bytes` bytes, from the pool or new; out of memory is a typed error.
    package func allocate(_ bytes: Int, op: String, growth: GrowthCursor? = nil) throws(TensorError) -> OpenCLBuffer {
        guard bytes <= device.maxAllocationBytes else {
            throw TensorError(.outOfMemory, op: op, message: "\(bytes) bytes exceed the largest allocation of \(device.name) (\(device.maxAllocationBytes) bytes)")
        }
        let capacity = OpenCLBufferPool.capacity(for: bytes)
        if let mem = pool.take(capacity: capacity) {
            return OpenCLBuffer(mem: mem, byteCount: bytes, memorySpace: memorySpace, pool: pool, growth: growth)
        }
        var status: cl_int = CL_SUCCESS
        var raw = createBuffer(cl_mem_flags(CL_MEM_READ_WRITE), capacity, nil, &status)
        if raw == nil || OpenCLStatus(status).isOutOfMemory {
            if let raw { _ = api.clReleaseMemObject(raw) }
            pool.drain()
            raw = createBuffer(cl_mem_flags(CL_MEM_READ_WRITE), capacity, nil, &status)
        }
        guard let raw, status == CL_SUCCESS else {
            if let raw { _ = api.clReleaseMemObject(raw) }
            // Only the allocation failures are out of memory: a lost device is a backend failure.
            let failure = OpenCLStatus(status)
            let kind: TensorError.Kind = failure.isOutOfMemory || status == CL_SUCCESS ? .outOfMemory : .backendFailure
            throw TensorError(kind, op: op, message: "cannot allocate \(bytes) bytes on \(device.name): clCreateBuffer failed with \(failure.name)")
        }
        return OpenCLBuffer(
            mem: CLMem(raw, capacity: capacity, api: api, live: liveBuffers), byteCount: bytes, memorySpace: memorySpace,
            pool: pool, growth: growth)
    }

    /// Copies a host buffer to the device. On devices that share memory with the host the buffer is
    /// wrapped instead (`CL_MEM_USE_HOST_PTR`, read-only: host values are immutable), and the host
    /// memory is kept alive until the driver destroys the memory object.
    package func upload(_ host: HostBuffer, op: String) throws(TensorError) -> OpenCLBuffer {
        if device.hostUnifiedMemory, host.byteCount > 0 {
            var status: cl_int = CL_SUCCESS
            let flags = cl_mem_flags(CL_MEM_READ_ONLY) | cl_mem_flags(CL_MEM_USE_HOST_PTR)
            if let raw = createBuffer(flags, host.byteCount, host.pointer, &status) {
                guard status == CL_SUCCESS else {
                    _ = api.clReleaseMemObject(raw)
                    return try copyToDevice(host, op: op)
                }
                let owner = Unmanaged.passRetained(host).toOpaque()
                let registered = api.clSetMemObjectDestructorCallback(raw, { _, owner in
                    if let owner { Unmanaged<HostBuffer>.fromOpaque(owner).release() }
                }, owner)
                if registered == CL_SUCCESS {
                    let mem = CLMem(raw, capacity: host.byteCount, api: api, live: liveBuffers)
                    return OpenCLBuffer(mem: mem, byteCount: host.byteCount, memorySpace: memorySpace, pool: nil)
                }
                Unmanaged<HostBuffer>.fromOpaque(owner).release()
                _ = api.clReleaseMemObject(raw)
            }
        }
        return try copyToDevice(host, op: op)
    }

    /// Copies a host buffer into a new device buffer.
    private func copyToDevice(_ host: HostBuffer, op: String) throws(TensorError) -> OpenCLBuffer {
        let buffer = try allocate(host.byteCount, op: op)
        guard host.byteCount > 0 else { return buffer }
        try checkCL(enqueueWrite(buffer.mem.raw, bytes: host.byteCount, from: host.pointer), "clEnqueueWriteBuffer", op: op)
        return buffer
    }

    /// The elements of a device buffer in host memory, after the commands that write it: mapped on
    /// devices that share memory with the host (no copy; the buffer stays out of the pool while the
    /// host value lives, see ``OpenCLMapping``), else copied into new host memory.
    package func download(_ buffer: OpenCLBuffer, op: String) throws(TensorError) -> HostBuffer {
        if device.hostUnifiedMemory, buffer.byteCount > 0, let mapped = try mapForReading(buffer, op: op) { return mapped }
        return try copyToHost(buffer, op: op)
    }

    /// Copies a device buffer into new host memory, after the commands that write it.
    package func copyToHost(_ buffer: OpenCLBuffer, op: String) throws(TensorError) -> HostBuffer {
        let host = try HostBuffer(byteCount: buffer.byteCount, op: op)
        guard buffer.byteCount > 0 else { return host }
        try checkCL(enqueueRead(buffer.mem.raw, bytes: buffer.byteCount, into: host.pointer), "clEnqueueReadBuffer", op: op)
        return host
    }
}
