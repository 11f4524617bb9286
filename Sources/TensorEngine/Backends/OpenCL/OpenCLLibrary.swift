import COpenCL
import Foundation

/// The OpenCL entry points the backend calls, resolved at run time from the ICD loader.
///
/// Nothing links against `libOpenCL`: ``OpenCLLibrary`` opens it with `dlopen` and this table holds
/// one `@convention(c)` pointer per function (types from `cl_icd.h`), so a machine without the
/// library still runs the engine, with the `opencl` backend unavailable. Every OpenCL call of the
/// backend goes through a table; the library is never closed, so the pointers stay valid.
final class OpenCLAPI: @unchecked Sendable {
    /// The library file that was opened (a path, or a soname the dynamic loader searched for).
    let library: String

    let clGetPlatformIDs: cl_api_clGetPlatformIDs
    let clGetPlatformInfo: cl_api_clGetPlatformInfo
    let clGetDeviceIDs: cl_api_clGetDeviceIDs
    let clGetDeviceInfo: cl_api_clGetDeviceInfo
    let clCreateContext: cl_api_clCreateContext
    let clReleaseContext: cl_api_clReleaseContext
    let clCreateCommandQueue: cl_api_clCreateCommandQueue
    let clReleaseCommandQueue: cl_api_clReleaseCommandQueue
    let clFinish: cl_api_clFinish
    let clCreateProgramWithSource: cl_api_clCreateProgramWithSource
    let clCreateProgramWithBinary: cl_api_clCreateProgramWithBinary
    let clBuildProgram: cl_api_clBuildProgram
    let clGetProgramBuildInfo: cl_api_clGetProgramBuildInfo
    let clGetProgramInfo: cl_api_clGetProgramInfo
    let clReleaseProgram: cl_api_clReleaseProgram
    let clCreateKernel: cl_api_clCreateKernel
    let clSetKernelArg: cl_api_clSetKernelArg
    let clReleaseKernel: cl_api_clReleaseKernel
    let clEnqueueNDRangeKernel: cl_api_clEnqueueNDRangeKernel
    let clCreateBuffer: cl_api_clCreateBuffer
    let clSetMemObjectDestructorCallback: cl_api_clSetMemObjectDestructorCallback
    let clReleaseMemObject: cl_api_clReleaseMemObject
    let clEnqueueReadBuffer: cl_api_clEnqueueReadBuffer
    let clEnqueueWriteBuffer: cl_api_clEnqueueWriteBuffer
    let clEnqueueMapBuffer: cl_api_clEnqueueMapBuffer
    let clEnqueueUnmapMemObject: cl_api_clEnqueueUnmapMemObject

    /// Resolves every entry point in an opened library; a missing one is an error naming it.
    init(handle: UnsafeMutableRawPointer, library: String) throws(TensorError) {
        func resolve<Function>(_ name: String, as type: Function.Type) throws(TensorError) -> Function {
            guard let symbol = dlsym(handle, name) else {
                throw TensorError(.backendFailure, op: "opencl", message: "the OpenCL library \(library) has no \(name)")
            }
            return unsafeBitCast(symbol, to: type)
        }
        self.library = library
        clGetPlatformIDs = try resolve("clGetPlatformIDs", as: cl_api_clGetPlatformIDs.self)
        clGetPlatformInfo = try resolve("clGetPlatformInfo", as: cl_api_clGetPlatformInfo.self)
        clGetDeviceIDs = try resolve("clGetDeviceIDs", as: cl_api_clGetDeviceIDs.self)
        clGetDeviceInfo = try resolve("clGetDeviceInfo", as: cl_api_clGetDeviceInfo.self)
        clCreateContext = try resolve("clCreateContext", as: cl_api_clCreateContext.self)
        clReleaseContext = try resolve("clReleaseContext", as: cl_api_clReleaseContext.self)
        clCreateCommandQueue = try resolve("clCreateCommandQueue", as: cl_api_clCreateCommandQueue.self)
        clReleaseCommandQueue = try resolve("clReleaseCommandQueue", as: cl_api_clReleaseCommandQueue.self)
        clFinish = try resolve("clFinish", as: cl_api_clFinish.self)
        clCreateProgramWithSource = try resolve("clCreateProgramWithSource", as: cl_api_clCreateProgramWithSource.self)
        clCreateProgramWithBinary = try resolve("clCreateProgramWithBinary", as: cl_api_clCreateProgramWithBinary.self)
        clBuildProgram = try resolve("clBuildProgram", as: cl_api_clBuildProgram.self)
        clGetProgramBuildInfo = try resolve("clGetProgramBuildInfo", as: cl_api_clGetProgramBuildInfo.self)
        clGetProgramInfo = try resolve("clGetProgramInfo", as: cl_api_clGetProgramInfo.self)
        clReleaseProgram = try resolve("clReleaseProgram", as: cl_api_clReleaseProgram.self)
        clCreateKernel = try resolve("clCreateKernel", as: cl_api_clCreateKernel.self)
        clSetKernelArg = try resolve("clSetKernelArg", as: cl_api_clSetKernelArg.self)
        clReleaseKernel = try resolve("clReleaseKernel", as: cl_api_clReleaseKernel.self)
        clEnqueueNDRangeKernel = try resolve("clEnqueueNDRangeKernel", as: cl_api_clEnqueueNDRangeKernel.self)
        clCreateBuffer = try resolve("clCreateBuffer", as: cl_api_clCreateBuffer.self)
        clSetMemObjectDestructorCallback = try resolve("clSetMemObjectDestructorCallback", as: cl_api_clSetMemObjectDestructorCallback.self)
        clReleaseMemObject = try resolve("clReleaseMemObject", as: cl_api_clReleaseMemObject.self)
        clEnqueueReadBuffer = try resolve("clEnqueueReadBuffer", as: cl_api_clEnqueueReadBuffer.self)
        clEnqueueWriteBuffer = try resolve("clEnqueueWriteBuffer", as: cl_api_clEnqueueWriteBuffer.self)
        clEnqueueMapBuffer = try resolve("clEnqueueMapBuffer", as: cl_api_clEnqueueMapBuffer.self)
        clEnqueueUnmapMemObject = try resolve("clEnqueueUnmapMemObject", as: cl_api_clEnqueueUnmapMemObject.self)
    }
}

/// Opening the OpenCL ICD loader at run time.
///
/// The process's table (``shared``) is loaded once, on first use, from `TENSORENGINE_OPENCL_LIBRARY`
/// (a path) when it is set, else from `libOpenCL.so.1`, else `libOpenCL.so`. A library that cannot be
/// opened, or lacks an entry point, leaves OpenCL unavailable with a reason naming the file or symbol.
enum OpenCLLibrary {
    /// The sonames tried, in order, when the environment names no library.
    static let defaultNames = ["libOpenCL.so.1", "libOpenCL.so"]
    /// The environment variable naming the library to open instead.
    static let environmentVariable = "TENSORENGINE_OPENCL_LIBRARY"

    /// The process's entry points, or why there are none. Swift initialises a static once, under a
    /// lock, so concurrent first uses load the library once.
    static let shared: Result<OpenCLAPI, TensorError> = {
        let configured = ProcessInfo.processInfo.environment[environmentVariable] ?? ""
        return load(path: configured.isEmpty ? nil : configured)
    }()

    /// Opens a library (the default sonames when `path` is `nil`) and resolves the entry points.
    static func load(path: String?) -> Result<OpenCLAPI, TensorError> {
        let names = path.map { [$0] } ?? defaultNames
        var failures: [String] = []
        for name in names {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                failures.append(dlerror().map { String(cString: $0) } ?? "\(name): cannot be opened")
                continue
            }
            do {
                return .success(try OpenCLAPI(handle: handle, library: name))
            } catch {
                dlclose(handle)
                return .failure(error)
            }
        }
        let hint = path == nil ? "install the ICD loader (Debian: ocl-icd-libopencl1) or set \(environmentVariable)" : "check \(environmentVariable)"
        return .failure(TensorError(.backendFailure, op: "opencl",
                                    message: "the OpenCL library could not be loaded (\(failures.joined(separator: "; "))); \(hint)"))
    }
}
