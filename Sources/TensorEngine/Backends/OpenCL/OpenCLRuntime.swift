import COpenCL
import Foundation
import Synchronization

/// Everything the backend shares on one device: the context, one in-order queue, built programs
/// and kernels, and the buffer pool. Created once per device per process (PoCL's first set-up is
/// not safe to race) and used from any thread: OpenCL calls are thread-safe except setting kernel
/// arguments, which ``launch(_:_:global:local:)`` does under a lock together with the enqueue.
package final class OpenCLRuntime: @unchecked Sendable {
    package let device: OpenCLDeviceInfo
    /// The entry points every call of this runtime goes through.
    let api: OpenCLAPI
    /// Simulated failures for tests; off unless a test injects one.
    /// Where tests install a fault hook (`TensorEngineChecks`'s injector).
    package let faults = OpenCLFaultSwitch()
    /// Device buffers of this runtime that exist, pooled ones included.
    let liveBuffers = OpenCLLiveBuffers()
    let context: CLContext
    package let queue: CLQueue
    let pool: OpenCLBufferPool
    let diskCache: ProgramDiskCache
    private let programs = Guarded<[ContentDigest: CLProgram]>([:])
    private let kernels = Guarded<[KernelKey: CLKernel]>([:])
    /// Serialises `clSetKernelArg` + enqueue, since kernel objects are shared between threads.
    let launchLock = Guarded<Void>(())

    private struct KernelKey: Hashable {
        let program: ContentDigest
        let name: KernelName
    }

    /// Kernels of the families' programs by family, name and options, so that a launch finds its
    /// kernel without assembling and digesting the program's source (tens of microseconds).
    private let familyKernels = Guarded<[FamilyKernelKey: CLKernel]>([:])

    private struct FamilyKernelKey: Hashable {
        let family: KernelFamily
        let name: KernelName
        let options: BuildOptions
    }

    private static let registry = Guarded<[Int: OpenCLRuntime]>([:])

    /// The process's runtime for a device, created on first use (under a lock, so never twice).
    static func shared(for device: OpenCLDeviceInfo, api: OpenCLAPI) throws(TensorError) -> OpenCLRuntime {
        try registry.withLock { (runtimes: inout [Int: OpenCLRuntime]) throws(TensorError) -> OpenCLRuntime in
            if let existing = runtimes[device.index] { return existing }
            let runtime = try OpenCLRuntime(device: device, api: api, cache: ProgramDiskCache(directory: ProgramDiskCache.defaultDirectory()))
            runtimes[device.index] = runtime
            return runtime
        }
    }

    /// A runtime of its own on a device, apart from the process's shared one: tests use it to
    /// inject faults without disturbing other users of the device. Create it only after the shared
    /// runtime exists (PoCL's first set-up is not safe to race).
    init(device: OpenCLDeviceInfo, api: OpenCLAPI, cache: ProgramDiskCache) throws(TensorError) {
        self.device = device
        self.api = api
        self.diskCache = cache
        var status: cl_int = CL_SUCCESS
        var deviceID: cl_device_id? = device.id
        guard let context = api.clCreateContext(nil, 1, &deviceID, nil, nil, &status), status == CL_SUCCESS else {
            throw TensorError(.backendFailure, op: "opencl", message: "clCreateContext on \(device.name) failed with \(OpenCLStatus(status).name)")
        }
        self.context = CLContext(context, api: api)
        guard let queue = api.clCreateCommandQueue(context, device.id, 0, &status), status == CL_SUCCESS else {
            throw TensorError(.backendFailure, op: "opencl", message: "clCreateCommandQueue on \(device.name) failed with \(OpenCLStatus(status).name)")
        }
        self.queue = CLQueue(queue, api: api)
        self.pool = OpenCLBufferPool(limitBytes: max(64 << 20, device.globalMemoryBytes / 8))
    }

    // MARK: Programs

    /// Options every build gets: the language version, and exact division where the device offers it.
    var baseOptions: String {
        var options = "-cl-std=CL1.2"
        if device.correctlyRoundedDivideSqrt { options += " -cl-fp32-correctly-rounded-divide-sqrt" }
        return options
    }

    /// A kernel of a family's program built with `options`.
    func kernel(_ name: KernelName, family: KernelFamily, options: BuildOptions) throws(TensorError) -> CLKernel {
        let key = FamilyKernelKey(family: family, name: name, options: options)
        if let kernel = familyKernels.withLock({ $0[key] }) { return kernel }
        let kernel = try kernel(name, source: try family.source, options: options)
        familyKernels.withLock { $0[key] = kernel }
        return kernel
    }

    /// A kernel of the program built from `source` with `options`: from memory, else from the disk
    /// cache, else compiled (and then cached).
    func kernel(_ name: KernelName, source: String, options: BuildOptions) throws(TensorError) -> CLKernel {
        let fullOptions = baseOptions + " " + options.commandLine
        let key = ProgramDiskCache.key(source: source, options: fullOptions, device: device)
        if let kernel = kernels.withLock({ $0[KernelKey(program: key, name: name)] }) { return kernel }
        let program = try program(source: source, options: fullOptions, key: key)
        var status: cl_int = CL_SUCCESS
        guard let raw = createKernel(program.raw, name.rawValue, &status), status == CL_SUCCESS else {
            throw TensorError(.backendFailure, op: "opencl", message: "clCreateKernel(\(name.rawValue)) failed with \(OpenCLStatus(status).name)")
        }
        let kernel = CLKernel(raw, program: program)
        return kernels.withLock { cache in
            if let existing = cache[KernelKey(program: key, name: name)] { return existing }
            cache[KernelKey(program: key, name: name)] = kernel
            return kernel
        }
    }

    private func program(source: String, options: String, key: ContentDigest) throws(TensorError) -> CLProgram {
        if let program = programs.withLock({ $0[key] }) { return program }
        let program = try buildProgram(source: source, options: options, key: key, cache: diskCache)
        return programs.withLock { cache in
            if let existing = cache[key] { return existing }
            cache[key] = program
            return program
        }
    }

    /// Builds a program through a disk cache: from the cached binary when one is valid, else from
    /// source, storing the new binary. A rejected binary is removed and rebuilt from source.
    func buildProgram(source: String, options: String, key: ContentDigest, cache: ProgramDiskCache) throws(TensorError) -> CLProgram {
        if let binary = cache.load(key) {
            if let program = try? programFromBinary(binary, options: options) { return program }
            cache.reject(key)
        }
        let program = try programFromSource(source, options: options)
        if let binary = self.binary(of: program) { cache.store(binary, for: key) }
        return program
    }

    private func programFromSource(_ source: String, options: String) throws(TensorError) -> CLProgram {
        var status: cl_int = CL_SUCCESS
        if let code = faults.failure(at: .other) { status = code }
        let created: cl_program? = status != CL_SUCCESS ? nil : source.withCString { text in
            var pointer: UnsafePointer<CChar>? = text
            return api.clCreateProgramWithSource(context.raw, 1, &pointer, nil, &status)
        }
        guard let created, status == CL_SUCCESS else {
            throw TensorError(.backendFailure, op: "opencl build", message: "clCreateProgramWithSource failed with \(OpenCLStatus(status).name)")
        }
        let program = CLProgram(created, api: api)
        try build(program, options: options)
        return program
    }

    private func programFromBinary(_ binary: [UInt8], options: String) throws(TensorError) -> CLProgram {
        var status: cl_int = CL_SUCCESS
        var binaryStatus: cl_int = CL_SUCCESS
        var deviceID: cl_device_id? = device.id
        var length = binary.count
        if let code = faults.failure(at: .other) { status = code }
        let created: cl_program? = status != CL_SUCCESS ? nil : binary.withUnsafeBufferPointer { bytes in
            var pointer: UnsafePointer<UInt8>? = bytes.baseAddress
            return api.clCreateProgramWithBinary(context.raw, 1, &deviceID, &length, &pointer, &binaryStatus, &status)
        }
        guard let created, status == CL_SUCCESS, binaryStatus == CL_SUCCESS else {
            if let created { _ = api.clReleaseProgram(created) }
            throw TensorError(.backendFailure, op: "opencl build", message: "clCreateProgramWithBinary failed with \(OpenCLStatus(status == CL_SUCCESS ? binaryStatus : status).name)")
        }
        let program = CLProgram(created, api: api)
        try build(program, options: options)
        return program
    }

    private func build(_ program: CLProgram, options: String) throws(TensorError) {
        let status = buildProgram(program.raw, options: options)
        guard status == CL_SUCCESS else {
            throw TensorError(.backendFailure, op: "opencl build", message: "clBuildProgram failed with \(OpenCLStatus(status).name) (options: \(options)); build log:\n\(buildLog(of: program))")
        }
    }

    /// The compiler's log for a program on this device.
    func buildLog(of program: CLProgram) -> String {
        var size = 0
        guard api.clGetProgramBuildInfo(program.raw, device.id, cl_program_build_info(CL_PROGRAM_BUILD_LOG), 0, nil, &size) == CL_SUCCESS,
            size > 0
        else { return "(no build log)" }
        var bytes = [CChar](repeating: 0, count: size)
        guard api.clGetProgramBuildInfo(program.raw, device.id, cl_program_build_info(CL_PROGRAM_BUILD_LOG), size, &bytes, nil) == CL_SUCCESS
        else { return "(no build log)" }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The device binary of a built program (`CL_PROGRAM_BINARIES`), or `nil` if the driver has none.
    private func binary(of program: CLProgram) -> [UInt8]? {
        var size = 0
        guard api.clGetProgramInfo(program.raw, cl_program_info(CL_PROGRAM_BINARY_SIZES), MemoryLayout<Int>.size, &size, nil) == CL_SUCCESS,
            size > 0
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let status = bytes.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return api.clGetProgramInfo(program.raw, cl_program_info(CL_PROGRAM_BINARIES), MemoryLayout<UnsafeMutablePointer<UInt8>?>.size, &pointer, nil)
        }
        return status == CL_SUCCESS ? bytes : nil
    }
}
