import Foundation
import Testing
@testable import TensorEngine

/// Downloads on a private runtime (its own pool): mapped on unified-memory devices, and the device
/// buffer kept out of the pool exactly as long as the host value viewing it.
@Suite(.serialized, .enabled(if: openCLAvailable, "no OpenCL device"))
struct OpenCLDownloadTests {
    private func privateRuntime() throws -> OpenCLRuntime {
        let shared = try #require(Engine.shared.backend(.opencl) as? OpenCLBackend)
        return try OpenCLRuntime(device: shared.runtime.device, api: shared.runtime.api, cache: ProgramDiskCache(directory: nil))
    }

    private func deviceBuffer(_ values: [Float], on runtime: OpenCLRuntime) throws -> OpenCLBuffer {
        let buffer = try runtime.allocate(values.count * 4, op: "test")
        let status = try values.withUnsafeBytes { bytes in
            let base = try #require(bytes.baseAddress)
            return runtime.enqueueWrite(buffer.mem.raw, bytes: bytes.count, from: base)
        }
        try checkCL(status, "clEnqueueWriteBuffer")
        return buffer
    }

    private func floats(_ host: HostBuffer, count: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: host.elements(as: Float.self), count: count))
    }

    @Test func aDownloadViewsTheDeviceBufferUntilTheHostValueGoes() throws {
        let runtime = try privateRuntime()
        let first = (0..<1000).map { Float($0) * 0.5 }
        var buffer: OpenCLBuffer? = try deviceBuffer(first, on: runtime)
        var host: HostBuffer? = try runtime.download(try #require(buffer), op: "test")
        #expect(floats(try #require(host), count: 1000) == first)
        #expect((host?.owner is OpenCLMapping) == runtime.device.hostUnifiedMemory, "mapped exactly on unified-memory devices")

        buffer = nil
        if runtime.device.hostUnifiedMemory {
            #expect(runtime.pool.idleCount == 0, "a mapped buffer must stay out of the pool while its host view lives")
        }
        host = nil
        #expect(runtime.pool.idleCount == 1)

        // The recycled buffer is rewritten and read again: the earlier mapping is gone.
        let second = (0..<1000).map { Float(-$0) }
        let reused = try deviceBuffer(second, on: runtime)
        #expect(runtime.pool.idleCount == 0)
        #expect(floats(try runtime.download(reused, op: "test"), count: 1000) == second)
        #expect(floats(try runtime.copyToHost(reused, op: "test"), count: 1000) == second)
    }

    @Test func mappedResultsOfAGraphAreCorrectAndNothingLeaks() throws {
        let runtime = try privateRuntime()
        let backend = OpenCLBackend(runtime: runtime)
        let x = Tensor(shape: [4, 3], scalars: (0..<12).map(Float.init))
        let node = try #require((x * 2 + 1).node)
        do {
            let (results, _) = try Engine.shared.run([node], policy: .only(.opencl), backends: [NaiveBackend(), backend])
            let host = try #require(results.first?.buffer as? HostBuffer)
            #expect(floats(host, count: 12) == (0..<12).map { Float($0) * 2 + 1 })
        }
        runtime.drainPool()
        #expect(runtime.liveBufferCount == 0)
    }
}
