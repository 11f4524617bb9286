import Foundation
import Testing
@testable import TensorEngine

/// Loading the ICD loader at run time: a missing library or entry point leaves OpenCL unavailable
/// with the reason, and the engine still evaluates on the host.
@Suite struct OpenCLLibraryTests {
    private let missingPath = "/nonexistent-tensorengine/libOpenCL.so.1"

    @Test func aMissingLibraryIsReportedWithItsPath() {
        guard case .failure(let error) = OpenCLLibrary.load(path: missingPath) else {
            Issue.record("a nonexistent library was loaded")
            return
        }
        #expect(error.kind == .backendFailure)
        #expect(error.message.contains(missingPath), "the reason should name the file: \(error.message)")
        #expect(error.message.contains(OpenCLLibrary.environmentVariable))
    }

    @Test func aLibraryWithoutTheEntryPointsIsReportedWithTheSymbol() {
        // The C math library exists wherever glibc does and has no OpenCL functions.
        guard case .failure(let error) = OpenCLLibrary.load(path: "libm.so.6") else {
            Issue.record("libm was accepted as an OpenCL library")
            return
        }
        #expect(error.message.contains("libm.so.6"), "\(error.message)")
        #expect(error.message.contains("clGetPlatformIDs"), "the reason should name the missing symbol: \(error.message)")
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func theDefaultLibraryResolvesEveryEntryPoint() throws {
        let api = try OpenCLLibrary.load(path: nil).get()
        #expect(OpenCLLibrary.defaultNames.contains(api.library))
        let devices = try OpenCLDiscovery.devices(api: api)
        #expect(!devices.isEmpty)
    }

    @Test func theBackendIsUnavailableWithTheLoaderReason() {
        let error = #expect(throws: TensorError.self) { _ = try OpenCLBackend(library: OpenCLLibrary.load(path: missingPath)) }
        #expect(error?.message.contains(missingPath) == true)
    }

    @Test func anEngineWithoutTheLibraryLeavesOpenCLOutAndStillEvaluates() throws {
        let engine = Engine(openCLLibrary: OpenCLLibrary.load(path: missingPath))
        #expect(engine.backend(.opencl) == nil)
        #expect(engine.unavailable.first { $0.id == .opencl }?.reason.contains(missingPath) == true)

        // softmax(x @ I + 1) along rows, with x = [[1, 2], [3, 4]]: each row is [1, e] / (1 + e).
        let x = Tensor(shape: [2, 2], scalars: [1, 2, 3, 4] as [Float])
        let identity = Tensor(shape: [2, 2], scalars: [1, 0, 0, 1] as [Float])
        let node = try #require((x.matmul(identity) + 1).softmax().node)
        let plan = try Planner(backends: engine.backends, profiles: engine.profiles, policy: .all).plan(targets: [node])
        #expect(!plan.steps.isEmpty)
        #expect(plan.steps.allSatisfy { $0.backend != .opencl })

        let (results, _) = try engine.run([node], policy: .all)
        let host = try #require(results.first?.buffer as? HostBuffer)
        let values = Array(UnsafeBufferPointer(start: host.elements(as: Float.self), count: 4))
        let low = 1 / (1 + Float(M_E))
        let expected: [Float] = [low, 1 - low, low, 1 - low]
        #expect(zip(values, expected).allSatisfy { abs($0 - $1) < 1e-6 }, "\(values) vs \(expected)")

        let error = #expect(throws: TensorError.self) { _ = try engine.run([node], policy: .only(.opencl)) }
        #expect(error?.kind == .unsupported)
    }
}
