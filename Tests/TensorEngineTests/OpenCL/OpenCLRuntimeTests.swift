import Foundation
import Testing
@testable import TensorEngine
import TensorEngineChecks

@Suite(.serialized)
struct OpenCLRuntimeTests {
    private func runtime() throws -> OpenCLRuntime {
        guard let backend = Engine.shared.backend(.opencl) as? OpenCLBackend else {
            throw TensorError(.unsupported, op: "test", message: "no OpenCL backend")
        }
        return backend.runtime
    }

    private func temporaryCache() -> ProgramDiskCache {
        ProgramDiskCache(directory: FileManager.default.temporaryDirectory.appendingPathComponent("te-cl-cache-\(UUID().uuidString)"))
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func programCacheMissHitAndCorruptEntry() throws {
        let runtime = try runtime()
        let cache = temporaryCache()
        let source = "// \(UUID().uuidString)\n__kernel void probe(__global int* x) { x[get_global_id(0)] = 42; }"
        let key = ProgramDiskCache.key(source: source, options: runtime.baseOptions, device: runtime.device)

        _ = try runtime.buildProgram(source: source, options: runtime.baseOptions, key: key, cache: cache)
        #expect(cache.statistics.misses == 1)
        #expect(cache.statistics.writes == 1)
        let url = try #require(cache.url(for: key))
        #expect(FileManager.default.fileExists(atPath: url.path))

        _ = try runtime.buildProgram(source: source, options: runtime.baseOptions, key: key, cache: cache)
        #expect(cache.statistics.hits == 1)

        try Data("TECLBIN1 not a binary at all".utf8).write(to: url)
        _ = try runtime.buildProgram(source: source, options: runtime.baseOptions, key: key, cache: cache)
        #expect(cache.statistics.corrupt == 1)
        #expect(cache.statistics.writes == 2, "the rebuilt program replaces the corrupt entry")
        _ = try runtime.buildProgram(source: source, options: runtime.baseOptions, key: key, cache: cache)
        #expect(cache.statistics.hits == 2)

        // A truncated payload (valid header, wrong length) is caught by the digest check too.
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(bytes.count / 2).write(to: url)
        _ = try runtime.buildProgram(source: source, options: runtime.baseOptions, key: key, cache: cache)
        #expect(cache.statistics.corrupt == 2)
        try? FileManager.default.removeItem(at: try #require(cache.directory))
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func buildFailureCarriesTheCompilerLog() throws {
        let runtime = try runtime()
        let cache = temporaryCache()
        let source = "__kernel void broken(__global int* x) { x[0] = undeclared_name_\(UInt32.random(in: 0...UInt32.max)); }"
        let key = ProgramDiskCache.key(source: source, options: runtime.baseOptions, device: runtime.device)
        let error = #expect(throws: TensorError.self) {
            _ = try runtime.buildProgram(source: source, options: runtime.baseOptions, key: key, cache: cache)
        }
        #expect(error?.kind == .backendFailure)
        #expect(error?.message.contains("CL_BUILD_PROGRAM_FAILURE") == true)
        #expect(error?.message.contains("undeclared_name_") == true, "the message should carry the build log: \(error?.message ?? "")")
    }

    @Test func noDeviceMakesTheBackendUnavailableWithAReason() throws {
        let error = #expect(throws: TensorError.self) { _ = try OpenCLBackend(devices: []) }
        #expect(error?.message.contains("no OpenCL platform or device") == true)
        let missing = #expect(throws: TensorError.self) { _ = try OpenCLBackend(selection: .nameContaining("no such device"), devices: []) }
        #expect(missing != nil)
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func selectionByIndexAndName() throws {
        let devices = try OpenCLDiscovery.devices(api: OpenCLLibrary.shared.get())
        #expect(throws: TensorError.self) { _ = try OpenCLDiscovery.choose(.index(devices.count), from: devices).get() }
        let first = try OpenCLDiscovery.choose(.index(0), from: devices).get()
        let byName = try OpenCLDiscovery.choose(.nameContaining(String(first.name.prefix(4)).uppercased()), from: devices).get()
        #expect(byName.name.lowercased().hasPrefix(first.name.prefix(4).lowercased()))
        #expect(OpenCLDeviceSelection(environmentValue: "1") == .index(1))
        #expect(OpenCLDeviceSelection(environmentValue: "gfx") == .nameContaining("gfx"))
        #expect(OpenCLDeviceSelection(environmentValue: " ") == .automatic)
    }

    /// The child half of the no-OpenCL tests: runs only inside the subprocesses below, where
    /// `TENSORENGINE_TEST_EXPECT_NO_OPENCL` holds a part of the reason the engine must give.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["TENSORENGINE_TEST_EXPECT_NO_OPENCL"] != nil))
    func childWithoutVendorsHasNoOpenCL() async throws {
        let reason = ProcessInfo.processInfo.environment["TENSORENGINE_TEST_EXPECT_NO_OPENCL"] ?? ""
        #expect(Engine.shared.backend(.opencl) == nil)
        let unavailable = Engine.shared.unavailable.first { $0.id == .opencl }?.reason
        #expect(unavailable?.contains(reason) == true, "reason: \(unavailable ?? "none")")
        #expect(BackendStatus.all.first { $0.id == .opencl }?.isAvailable == false)
        let sum = try await (Tensor([1, 2, 3] as [Float]) + 1).shapedArray(of: Float.self)
        #expect(sum.scalars == [2, 3, 4])
        let error = await #expect(throws: TensorError.self) {
            try await withComputePolicy(.only(.opencl)) { try await (Tensor([1] as [Float]) + 1).shapedArray(of: Float.self) }
        }
        #expect(error?.kind == .unsupported)
    }

    /// Runs this test binary again with the ICD loader pointed at an empty vendor directory (no
    /// platform), and with `TENSORENGINE_OPENCL_LIBRARY` naming a file that does not exist (no library).
    @Test(arguments: [
        ("OCL_ICD_VENDORS", "(empty directory)", "no OpenCL platform"),
        ("TENSORENGINE_OPENCL_LIBRARY", "/nonexistent-tensorengine/libOpenCL.so.1", "/nonexistent-tensorengine/libOpenCL.so.1"),
    ])
    func withoutOpenCLTheEngineStartsAndRunsOnTheHost(variable: String, value: String, reason: String) throws {
        guard ProcessInfo.processInfo.environment["TENSORENGINE_TEST_EXPECT_NO_OPENCL"] == nil else { return }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0])
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("te-no-vendors-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["--testing-library", "swift-testing", "--filter", "childWithoutVendorsHasNoOpenCL"]
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = variable == "OCL_ICD_VENDORS" ? empty.path : value
        environment["TENSORENGINE_TEST_EXPECT_NO_OPENCL"] = reason
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "child output:\n\(text)")
        #expect(text.contains("childWithoutVendorsHasNoOpenCL() passed"), "the child should have run and passed the test:\n\(text)")
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func twoThreadsEvaluateOnTheSameDevice() async throws {
        let expected = try await withComputePolicy(.only(.naive)) {
            try await (random([64, 48], seed: 120).matmul(random([48, 32], seed: 121)).relu().sum(alongAxes: 1)).shapedArray(of: Float.self)
        }
        try await withThrowingTaskGroup(of: [Float].self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var last: [Float] = []
                    for _ in 0..<20 {
                        last = try await withComputePolicy(.only(.opencl)) {
                            try await (random([64, 48], seed: 120).matmul(random([48, 32], seed: 121)).relu().sum(alongAxes: 1)).shapedArray(of: Float.self)
                        }.scalars
                    }
                    return last
                }
            }
            for try await result in group {
                let tolerance = OpKind.matmul.parityTolerance(reductionLength: 48 * 32)
                #expect(zip(result, expected.scalars).allSatisfy { tolerance.accepts($0, $1) })
            }
        }
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func planPlacesEveryStepOnOpenCL() throws {
        let tensor = random([8, 8], seed: 130).matmul(random([8, 8], seed: 131)).softmax()
        let node = try #require(tensor.node)
        let plan = try Planner(backends: Engine.shared.backends, profiles: Engine.shared.profiles, policy: .only(.opencl)).plan(targets: [node])
        #expect(!plan.steps.isEmpty)
        #expect(plan.steps.allSatisfy { $0.backend == .opencl })
    }

    @Test(.enabled(if: openCLAvailable, "no OpenCL device"))
    func outOfMemoryIsATypedError() throws {
        let runtime = try runtime()
        let error = #expect(throws: TensorError.self) { _ = try runtime.allocate(runtime.device.maxAllocationBytes + 1, op: "test") }
        #expect(error?.kind == .outOfMemory)
        #expect(OpenCLStatus(-5).name == "CL_OUT_OF_RESOURCES")
        #expect(OpenCLStatus(-5).isOutOfMemory)
    }
}

@Suite struct OpenCLKernelEmbeddingTests {
    /// `kernels/` of this checkout, found from this file's path.
    private var kernelsDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("kernels")
    }

    @Test func everyKernelFileIsEmbeddedVerbatim() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: kernelsDirectory.path).filter { $0.hasSuffix(".cl") }
        #expect(Set(files.map { String($0.dropLast(3)) }) == Set(EmbeddedKernels.sources.keys))
        for family in KernelFamily.allCases {
            let embedded = try KernelFamily.file(family.rawValue, directory: nil)
            let onDisk = try KernelFamily.file(family.rawValue, directory: kernelsDirectory.path)
            #expect(embedded == onDisk, "\(family).cl differs from its embedded copy")
        }
    }

    @Test func aMissingKernelsDirectoryIsATypedError() {
        let error = #expect(throws: TensorError.self) { _ = try KernelFamily.file("copy", directory: "/nonexistent-te-kernels") }
        #expect(error?.kind == .backendFailure)
    }
}

@Suite struct OpenCLOperandAccessTests {
    @Test func aBroadcastBiasIsReadAsARepeatedRow() {
        let output = Layout(contiguous: [37, 16])
        let bias = Layout(contiguous: [16]).broadcast(to: [37, 16])
        let merged = KernelLayout(shape: [37, 16], layouts: [output, bias])
        #expect(OpenCLBackend.rowLength(merged.strides[1], output: merged.strides[0], shape: merged.shape) == 16)
        let rank3 = KernelLayout(shape: [3, 4, 8], layouts: [Layout(contiguous: [3, 4, 8]), Layout(contiguous: [4, 8]).broadcast(to: [3, 4, 8])])
        #expect(OpenCLBackend.rowLength(rank3.strides[1], output: rank3.strides[0], shape: rank3.shape) == 32)
        let column = KernelLayout(shape: [37, 16], layouts: [output, Layout(contiguous: [37, 1]).broadcast(to: [37, 16])])
        #expect(OpenCLBackend.rowLength(column.strides[1], output: column.strides[0], shape: column.shape) == nil)
        let transposed = KernelLayout(shape: [16, 8], layouts: [Layout(contiguous: [16, 8]), Layout(contiguous: [8, 16]).permuted([1, 0])])
        #expect(OpenCLBackend.rowLength(transposed.strides[1], output: transposed.strides[0], shape: transposed.shape) == nil)
    }
}
