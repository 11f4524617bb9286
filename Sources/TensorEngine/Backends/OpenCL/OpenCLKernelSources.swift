import Foundation

/// The kernel files of `kernels/`, one family each. Every program is `common.cl` followed by one
/// family's file (and, for elementwise, a generated kernel).
enum KernelFamily: String, Sendable, Hashable, CaseIterable {
    case elementwise, copy, reduce, softmax, norm, scan, topk, gather, matmul, window

    /// The prelude every program starts with.
    static let commonFile = "common"

    /// `common.cl` followed by the family's file: from `TENSORENGINE_KERNELS_DIR` when it is set
    /// (for kernel work without rebuilding), else the sources embedded at build time.
    var source: String {
        get throws(TensorError) {
            try Self.file(Self.commonFile) + "\n" + Self.file(rawValue)
        }
    }

    /// `TENSORENGINE_KERNELS_DIR`, read with `getenv`: kernels are fetched on every launch, and
    /// `ProcessInfo.environment` copies the whole environment (19 µs with 39 variables).
    static var kernelsDirectory: String? { getenv("TENSORENGINE_KERNELS_DIR").map { String(cString: $0) } }

    /// The text of `kernels/<name>.cl`: read from `directory` when given (by default the value of
    /// `TENSORENGINE_KERNELS_DIR`), else the copy embedded at build time.
    static func file(_ name: String, directory: String? = kernelsDirectory) throws(TensorError) -> String {
        if let directory, !directory.isEmpty {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("\(name).cl")
            guard let text = try? String(contentsOf: url, encoding: .utf8) else {
                throw TensorError(.backendFailure, op: "opencl", message: "cannot read \(url.path) (TENSORENGINE_KERNELS_DIR is set)")
            }
            return text
        }
        guard let text = EmbeddedKernels.sources[name] else {
            throw TensorError(.backendFailure, op: "opencl", message: "kernel file \(name).cl was not embedded at build time")
        }
        return text
    }
}

/// The kernels the host launches, by their name in the `.cl` files.
package enum KernelName: String, Sendable, Hashable {
    case stridedCopy = "strided_copy"
    case transposeTiled = "transpose_tiled"
    case fill
    case reduceRows = "reduce_rows"
    case argReduceRows = "arg_reduce_rows"
    case softmaxRows = "softmax_rows"
    case logSoftmaxRows = "log_softmax_rows"
    case layerNormRows = "layer_norm_rows"
    case cumulativeSumRows = "cumulative_sum_rows"
    case cumulativeProductRows = "cumulative_product_rows"
    case topKRows = "top_k_rows"
    case gather
    case scatter
    case matmulTiled = "matmul_tiled"
    case matmulBlocked = "matmul_blocked"
    case matmulPackB = "matmul_pack_b"
    case convolutionDirect = "convolution_direct"
    case im2col
    case convolutionEpilogue = "convolution_epilogue"
    case maxPool = "max_pool"
    case averagePool = "average_pool"
    /// The generated kernel of an elementwise op or fused region.
    case elementwise = "te_elementwise"
    /// The eight-wide form of the generated kernel (CPU devices, no strided operand).
    case elementwise8 = "te_elementwise8"
}

/// Preprocessor definitions for a build, kept sorted so equal sets give equal option strings.
struct BuildOptions: Sendable, Hashable {
    private(set) var defines: [String: String] = [:]

    init(_ defines: [String: String] = [:]) { self.defines = defines }

    mutating func define(_ name: String, _ value: String = "1") { defines[name] = value }

    /// The definitions `IN_T`, `IN_LOAD`, `ACC_T`, `ACC_IS_FLOAT` for an input of this type.
    mutating func input(_ type: ScalarType) {
        define("IN_T", type.clStorage)
        define("IN_LOAD", type.clLoadMacro)
        define("ACC_T", type.clCompute)
        define("ACC_IS_FLOAT", type.isFloatingPoint ? "1" : "0")
        define("IN_VLOAD8", type == .float16 ? "vload_half8" : "vload8")
    }

    /// The definitions `OUT_T`, `OUT_STORE` for an output of this type.
    mutating func output(_ type: ScalarType) {
        define("OUT_T", type.clStorage)
        define("OUT_STORE", type.clStoreMacro)
    }

    /// `-D NAME=VALUE ...` in name order.
    var commandLine: String {
        defines.keys.sorted().map { "-D \($0)=\(defines[$0] ?? "1")" }.joined(separator: " ")
    }
}

extension ScalarType {
    /// The OpenCL C type elements are stored as (`half` only behind pointers, via vload_half).
    var clStorage: String {
        switch self {
        case .float32: "float"
        case .float16: "half"
        case .int32: "int"
        case .bool: "uchar"
        case .int64: "long"
        case .float64: "double"
        }
    }

    /// The OpenCL C type the element is computed in.
    var clCompute: String {
        switch self {
        case .float32, .float16: "float"
        case .int32, .bool: "int"
        case .int64: "long"
        case .float64: "double"
        }
    }

    /// The unsigned type of the element's size, for moving bit patterns.
    var clBits: String {
        switch self {
        case .float32, .int32: "uint"
        case .float16: "ushort"
        case .bool: "uchar"
        case .int64, .float64: "ulong"
        }
    }

    var clLoadMacro: String {
        switch self {
        case .float32: "TE_LOAD_F32"
        case .float16: "TE_LOAD_F16"
        case .int32: "TE_LOAD_I32"
        case .bool: "TE_LOAD_U8"
        case .int64: "TE_LOAD_I64"
        case .float64: "TE_LOAD_F64"
        }
    }

    var clStoreMacro: String {
        switch self {
        case .float32: "TE_STORE_F32"
        case .float16: "TE_STORE_F16"
        case .int32: "TE_STORE_I32"
        case .bool: "TE_STORE_U8"
        case .int64: "TE_STORE_I64"
        case .float64: "TE_STORE_F64"
        }
    }
}
