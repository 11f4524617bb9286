import COpenCL

/// A device buffer mapped for reading into host memory: the zero-copy download of unified-memory
/// devices. It holds the buffer, so the buffer stays out of the pool (and nothing rewrites it)
/// while the host value viewing it lives, and unmaps it when that value goes; the unmap is queued
/// before any later command that could reuse the buffer (the queue is in order).
final class OpenCLMapping: @unchecked Sendable {
    let buffer: OpenCLBuffer
    let pointer: UnsafeMutableRawPointer
    private let runtime: OpenCLRuntime

    init(buffer: OpenCLBuffer, pointer: UnsafeMutableRawPointer, runtime: OpenCLRuntime) {
        self.buffer = buffer
        self.pointer = pointer
        self.runtime = runtime
    }

    deinit { _ = runtime.api.clEnqueueUnmapMemObject(runtime.queue.raw, buffer.mem.raw, pointer, 0, nil, nil) }
}

extension OpenCLRuntime {
    /// Maps a device buffer for reading, after the commands that write it; `nil` when the mapped
    /// memory is not aligned enough to view as a host buffer (the caller then copies).
    func mapForReading(_ buffer: OpenCLBuffer, op: String) throws(TensorError) -> HostBuffer? {
        var status: cl_int = CL_SUCCESS
        let pointer = enqueueMap(buffer.mem.raw, bytes: buffer.byteCount, &status)
        try checkCL(status, "clEnqueueMapBuffer", op: op)
        guard let pointer else {
            throw TensorError(.backendFailure, op: op, message: "clEnqueueMapBuffer returned no memory for \(buffer.byteCount) bytes")
        }
        let mapping = OpenCLMapping(buffer: buffer, pointer: pointer, runtime: self)
        // Host buffers the engine allocates are 64-byte aligned; a view gets no less.
        guard Int(bitPattern: pointer) % 64 == 0 else { return nil }
        return HostBuffer(borrowing: pointer, byteCount: buffer.byteCount, owner: mapping)
    }
}
