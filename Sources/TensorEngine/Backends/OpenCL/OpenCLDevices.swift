import COpenCL
import Foundation
import Synchronization

/// Which OpenCL device the `opencl` backend uses.
///
/// The default picks the first GPU, else the first accelerator, else the first CPU device, in the
/// order the ICD loader lists platforms and devices. `TENSORENGINE_OPENCL_DEVICE` overrides it with
/// an index into that list (`1`) or part of a device name (`gfx`, `pthread`); ``OpenCLDevices/select(_:)``
/// overrides both.
public enum OpenCLDeviceSelection: Sendable, Hashable {
    /// GPUs before accelerators before CPUs.
    case automatic
    /// The device at this position in ``OpenCLDevices/available()``.
    case index(Int)
    /// The first device whose name contains this text (case-insensitive).
    case nameContaining(String)

    /// Parses the value of `TENSORENGINE_OPENCL_DEVICE`: an integer is an index, other text a name part.
    init(environmentValue value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty { self = .automatic } else if let index = Int(trimmed) { self = .index(index) } else {
            self = .nameContaining(trimmed)
        }
    }
}

/// The OpenCL devices of this machine, and the choice of the one the engine uses.
public enum OpenCLDevices {
    private static let chosen = Guarded<OpenCLDeviceSelection?>(nil)

    /// Chooses the device. Takes effect when the engine starts, that is before the first evaluation
    /// of the process; later calls do not move a running backend.
    public static func select(_ selection: OpenCLDeviceSelection) {
        chosen.withLock { $0 = selection }
    }

    /// The devices found, as `index: name (type, platform)` lines; empty without OpenCL.
    public static func available() -> [String] {
        guard case .success(let api) = OpenCLLibrary.shared else { return [] }
        let devices = (try? OpenCLDiscovery.devices(api: api)) ?? []
        return devices.map { "\($0.index): \($0.name) (\($0.type), \($0.platformName))" }
    }

    /// The selection in force: the API's, else the environment's, else automatic.
    static var selection: OpenCLDeviceSelection {
        if let selected = chosen.withLock({ $0 }) { return selected }
        let value = ProcessInfo.processInfo.environment["TENSORENGINE_OPENCL_DEVICE"] ?? ""
        return OpenCLDeviceSelection(environmentValue: value)
    }
}

/// What the engine knows about one OpenCL device: identity, limits and features, queried once.
package struct OpenCLDeviceInfo: @unchecked Sendable {
    enum DeviceType: String, Sendable { case gpu, accelerator, cpu, other }

    /// Position in the discovery order (platforms, then devices), the index of `MemorySpace.openCL`.
    let index: Int
    let id: cl_device_id
    let platform: cl_platform_id
    let platformName: String
    package let name: String
    package let driverVersion: String
    let type: DeviceType
    let maxWorkGroupSize: Int
    let localMemoryBytes: Int
    let globalMemoryBytes: Int
    /// Bytes of the cache in front of global memory (0 when the device reports none).
    let globalMemoryCacheBytes: Int
    let maxAllocationBytes: Int
    let hostUnifiedMemory: Bool
    let hasFP64: Bool
    let hasFP16: Bool
    let hasFMA: Bool
    let correctlyRoundedDivideSqrt: Bool
    let computeUnits: Int
}

/// Enumeration and selection of devices through the ICD loader.
enum OpenCLDiscovery {
    /// Every device of every platform, in the loader's order. No platform gives an empty list.
    static func devices(api: OpenCLAPI) throws(TensorError) -> [OpenCLDeviceInfo] {
        var platformCount: cl_uint = 0
        let status = api.clGetPlatformIDs(0, nil, &platformCount)
        // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR (-1001) when no vendor is installed.
        guard status == CL_SUCCESS, platformCount > 0 else { return [] }
        var platforms = [cl_platform_id?](repeating: nil, count: Int(platformCount))
        try checkCL(api.clGetPlatformIDs(platformCount, &platforms, nil), "clGetPlatformIDs")
        var result: [OpenCLDeviceInfo] = []
        for case let platform? in platforms {
            var deviceCount: cl_uint = 0
            guard api.clGetDeviceIDs(platform, cl_device_type(CL_DEVICE_TYPE_ALL), 0, nil, &deviceCount) == CL_SUCCESS,
                deviceCount > 0
            else { continue }
            var ids = [cl_device_id?](repeating: nil, count: Int(deviceCount))
            guard api.clGetDeviceIDs(platform, cl_device_type(CL_DEVICE_TYPE_ALL), deviceCount, &ids, nil) == CL_SUCCESS
            else { continue }
            for case let id? in ids {
                result.append(describe(id, platform: platform, index: result.count, api: api))
            }
        }
        return result
    }

    /// The device a selection names among `devices`, or the reason there is none.
    static func choose(_ selection: OpenCLDeviceSelection, from devices: [OpenCLDeviceInfo]) -> Result<OpenCLDeviceInfo, TensorError> {
        func failure(_ message: String) -> Result<OpenCLDeviceInfo, TensorError> {
            .failure(TensorError(.backendFailure, op: "opencl", message: message))
        }
        guard !devices.isEmpty else { return failure("no OpenCL platform or device found by the ICD loader") }
        switch selection {
        case .automatic:
            let rank: (OpenCLDeviceInfo.DeviceType) -> Int = { type in
                switch type {
                case .gpu: 0
                case .accelerator: 1
                case .cpu: 2
                case .other: 3
                }
            }
            let best = devices.enumerated().min { (rank($0.element.type), $0.offset) < (rank($1.element.type), $1.offset) }
            guard let best else { return failure("no OpenCL device") }
            return .success(best.element)
        case .index(let index):
            guard devices.indices.contains(index) else {
                return failure("TENSORENGINE_OPENCL_DEVICE index \(index) is outside 0..<\(devices.count)")
            }
            return .success(devices[index])
        case .nameContaining(let text):
            guard let device = devices.first(where: { $0.name.localizedCaseInsensitiveContains(text) }) else {
                return failure("no OpenCL device name contains '\(text)' (have: \(devices.map(\.name).joined(separator: ", ")))")
            }
            return .success(device)
        }
    }

    private static func describe(_ id: cl_device_id, platform: cl_platform_id, index: Int, api: OpenCLAPI) -> OpenCLDeviceInfo {
        let type: cl_device_type = scalar(api, id, CL_DEVICE_TYPE, 0)
        let deviceType: OpenCLDeviceInfo.DeviceType =
            type & cl_device_type(CL_DEVICE_TYPE_GPU) != 0 ? .gpu
            : type & cl_device_type(CL_DEVICE_TYPE_ACCELERATOR) != 0 ? .accelerator
            : type & cl_device_type(CL_DEVICE_TYPE_CPU) != 0 ? .cpu : .other
        let extensions = string(api, id, CL_DEVICE_EXTENSIONS)
        let singleConfig: cl_device_fp_config = scalar(api, id, CL_DEVICE_SINGLE_FP_CONFIG, 0)
        let workGroup: Int = scalar(api, id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1)
        let local: cl_ulong = scalar(api, id, CL_DEVICE_LOCAL_MEM_SIZE, 0)
        let global: cl_ulong = scalar(api, id, CL_DEVICE_GLOBAL_MEM_SIZE, 0)
        let globalCache: cl_ulong = scalar(api, id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, 0)
        let maxAlloc: cl_ulong = scalar(api, id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0)
        let unified: cl_bool = scalar(api, id, CL_DEVICE_HOST_UNIFIED_MEMORY, cl_bool(CL_FALSE))
        let units: cl_uint = scalar(api, id, CL_DEVICE_MAX_COMPUTE_UNITS, 1)
        var platformName = [CChar](repeating: 0, count: 256)
        _ = api.clGetPlatformInfo(platform, cl_platform_info(CL_PLATFORM_NAME), 255, &platformName, nil)
        return OpenCLDeviceInfo(
            index: index, id: id, platform: platform,
            platformName: String(decoding: platformName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
            name: string(api, id, CL_DEVICE_NAME), driverVersion: string(api, id, CL_DRIVER_VERSION), type: deviceType,
            maxWorkGroupSize: max(1, workGroup), localMemoryBytes: Int(clamping: local), globalMemoryBytes: Int(clamping: global),
            globalMemoryCacheBytes: Int(clamping: globalCache),
            maxAllocationBytes: Int(clamping: maxAlloc), hostUnifiedMemory: unified != 0,
            hasFP64: extensions.contains("cl_khr_fp64"), hasFP16: extensions.contains("cl_khr_fp16"),
            hasFMA: singleConfig & cl_device_fp_config(CL_FP_FMA) != 0,
            correctlyRoundedDivideSqrt: singleConfig & cl_device_fp_config(CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0,
            computeUnits: Int(units))
    }

    private static func string(_ api: OpenCLAPI, _ id: cl_device_id, _ parameter: Int32) -> String {
        var size = 0
        guard api.clGetDeviceInfo(id, cl_device_info(parameter), 0, nil, &size) == CL_SUCCESS, size > 0 else { return "" }
        var bytes = [CChar](repeating: 0, count: size)
        guard api.clGetDeviceInfo(id, cl_device_info(parameter), size, &bytes, nil) == CL_SUCCESS else { return "" }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespaces)
    }

    private static func scalar<T>(_ api: OpenCLAPI, _ id: cl_device_id, _ parameter: Int32, _ fallback: T) -> T {
        var value = fallback
        let status = withUnsafeMutableBytes(of: &value) { raw in
            api.clGetDeviceInfo(id, cl_device_info(parameter), raw.count, raw.baseAddress, nil)
        }
        return status == CL_SUCCESS ? value : fallback
    }
}
