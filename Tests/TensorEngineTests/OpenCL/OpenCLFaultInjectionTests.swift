import Foundation
import Testing
@testable import TensorEngine
import TensorEngineChecks

/// Simulated driver failures on a private runtime (its own context, fault injector, live-buffer
/// count and program cache directory), so the other OpenCL suites keep using the shared one
/// undisturbed. Every fault ends in a typed error or a correct result, and every device buffer
/// created is released once the tensors are gone.
@Suite(.serialized, .enabled(if: openCLAvailable, "no OpenCL device"))
struct OpenCLFaultInjectionTests {
    /// A backend on a fresh runtime whose program cache is a new temporary directory (or `cache`).
    private func privateBackend(cache: URL? = nil) throws -> (OpenCLBackend, URL) {
        let shared = try #require(Engine.shared.backend(.opencl) as? OpenCLBackend)
        let directory = cache ?? FileManager.default.temporaryDirectory.appendingPathComponent("te-cl-faults-\(UUID().uuidString)")
        let runtime = try OpenCLRuntime(device: shared.runtime.device, api: shared.runtime.api, cache: ProgramDiskCache(directory: directory))
        return (OpenCLBackend(runtime: runtime), directory)
    }

    /// matmul, elementwise ops and a softmax: uploads, several kernels and programs, a download.
    private func graph() -> Tensor {
        (random([16, 24], seed: 300).matmul(random([24, 8], seed: 301)) * 0.5 + 1).relu().softmax()
    }

    /// Evaluates the graph with every step forced onto `backend`; the result's scalars.
    private func evaluate(on backend: OpenCLBackend) throws -> [Float] {
        let node = try #require(graph().node)
        let (results, _) = try Engine.shared.run([node], policy: .only(.opencl), backends: [NaiveBackend(), backend])
        let host = try #require(results.first?.buffer as? HostBuffer)
        return Array(UnsafeBufferPointer(start: host.elements(as: Float.self), count: 16 * 8))
    }

    /// The graph's result on the naive backend, within the matmul tolerance of `values`.
    private func expectCorrect(_ values: [Float], sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let node = try #require(graph().node)
        let (results, _) = try Engine.shared.run([node], policy: .only(.naive), backends: [NaiveBackend()])
        let host = try #require(results.first?.buffer as? HostBuffer)
        let expected = Array(UnsafeBufferPointer(start: host.elements(as: Float.self), count: 16 * 8))
        let tolerance = OpKind.matmul.parityTolerance(reductionLength: 24)
        #expect(zip(values, expected).allSatisfy { tolerance.accepts($0, $1) }, "\(values) vs \(expected)", sourceLocation: sourceLocation)
    }

    /// Runs the graph under `fault` and returns the error it ended in (`nil` for a result, which
    /// must then be correct); checks that no device buffer outlives the evaluation.
    private func run(_ backend: OpenCLBackend, under fault: OpenCLFault, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> TensorError? {
        let runtime = backend.runtime
        runtime.drainPool()
        let before = runtime.liveBufferCount
        let injector = OpenCLFaultInjector()
        injector.inject(fault, into: runtime.faults)
        defer { injector.disarm(runtime.faults) }
        var failure: TensorError?
        do {
            try expectCorrect(try evaluate(on: backend), sourceLocation: sourceLocation)
        } catch let error as TensorError {
            failure = error
        }
        #expect(injector.failuresInjected > 0, "the fault \(fault) was never reached", sourceLocation: sourceLocation)
        runtime.drainPool()
        #expect(runtime.liveBufferCount == before, "device buffers leaked under \(fault)", sourceLocation: sourceLocation)
        return failure
    }

    @Test func aFailedAllocationIsRetriedAfterDrainingThePool() throws {
        let (backend, directory) = try privateBackend()
        defer { try? FileManager.default.removeItem(at: directory) }
        for nth in 1...6 {
            let error = try run(backend, under: .allocation(nth: nth))
            #expect(error == nil, "allocation \(nth): \(String(describing: error))")
        }
    }

    @Test func allocationsThatKeepFailingAreOutOfMemory() throws {
        let (backend, directory) = try privateBackend()
        defer { try? FileManager.default.removeItem(at: directory) }
        for nth in [1, 3, 5] {
            let error = try #require(try run(backend, under: .allocation(nth: nth, times: 1000)))
            #expect(error.kind == .outOfMemory)
            #expect(error.message.contains("CL_MEM_OBJECT_ALLOCATION_FAILURE"), "\(error.message)")
        }
        try expectCorrect(try evaluate(on: backend))
    }

    @Test func aFailedBuildFromSourceIsABackendFailure() throws {
        let (backend, directory) = try privateBackend()
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = try #require(try run(backend, under: .build(nth: 1)))
        #expect(error.kind == .backendFailure)
        #expect(error.message.contains("CL_BUILD_PROGRAM_FAILURE"), "\(error.message)")
        try expectCorrect(try evaluate(on: backend))
    }

    @Test func aFailedBuildFromACachedBinaryIsRebuiltFromSource() throws {
        let (warm, directory) = try privateBackend()
        defer { try? FileManager.default.removeItem(at: directory) }
        try expectCorrect(try evaluate(on: warm))
        #expect(warm.runtime.diskCache.statistics.writes > 0)

        // A new runtime on the same cache directory builds every program from its cached binary.
        let (cached, _) = try privateBackend(cache: directory)
        #expect(try run(cached, under: .build(nth: 1)) == nil, "the rejected binary should be rebuilt from source")
        #expect(cached.runtime.diskCache.statistics.hits > 0)
        #expect(cached.runtime.diskCache.statistics.corrupt == 1)

        // Both the binary and the source build failing is a typed error.
        let (failing, _) = try privateBackend(cache: directory)
        let error = try #require(try run(failing, under: .build(nth: 1, times: 2)))
        #expect(error.kind == .backendFailure)
        #expect(error.message.contains("CL_BUILD_PROGRAM_FAILURE"), "\(error.message)")
    }

    @Test func aFailedEnqueueIsATypedError() throws {
        let (backend, directory) = try privateBackend()
        defer { try? FileManager.default.removeItem(at: directory) }
        for nth in 1...4 {
            let error = try #require(try run(backend, under: .enqueue(nth: nth)), "enqueue \(nth) should fail the evaluation")
            #expect(error.kind == .outOfMemory, "CL_OUT_OF_RESOURCES counts as running out of memory")
            #expect(error.message.contains("CL_OUT_OF_RESOURCES"), "\(error.message)")
        }
        try expectCorrect(try evaluate(on: backend))
    }

    /// The first enqueues succeed, then every call fails. After the injector is disarmed the same
    /// runtime works again: a simulated loss leaves the real device and queue intact.
    @Test func losingTheDeviceMidGraphIsATypedErrorAndLeaksNothing() throws {
        let (backend, directory) = try privateBackend()
        defer { try? FileManager.default.removeItem(at: directory) }
        try expectCorrect(try evaluate(on: backend))
        for afterEnqueues in [0, 1, 2, 3] {
            let error = try #require(try run(backend, under: .deviceLost(afterEnqueues: afterEnqueues)))
            #expect(error.kind == .backendFailure, "a lost device is not out of memory: \(error.message)")
            #expect(error.message.contains("CL_DEVICE_NOT_AVAILABLE"), "\(error.message)")
        }
        try expectCorrect(try evaluate(on: backend))
        backend.runtime.drainPool()
        #expect(backend.runtime.liveBufferCount == 0)
    }

    @Test func theSwitchIsOffByDefault() throws {
        let faults = OpenCLFaultSwitch()
        let injector = OpenCLFaultInjector()
        #expect(faults.failure(at: .allocation) == nil)
        injector.inject(.enqueue(nth: 2), into: faults)
        #expect(faults.failure(at: .enqueue) == nil)
        #expect(faults.failure(at: .enqueue) != nil)
        #expect(faults.failure(at: .enqueue) == nil)
        #expect(injector.failuresInjected == 1)
        injector.disarm(faults)
        #expect(faults.failure(at: .enqueue) == nil, "disarmed, every call reaches the driver")
        #expect(injector.failuresInjected == 0)
    }
}
