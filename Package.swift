// swift-tools-version:6.0
import Foundation
import PackageDescription

// The CPU kernels are compiled for Haswell-class x86-64 (AVX2 + FMA) so that SIMD code becomes real
// vector code (baseline x86-64 Swift is SSE2-only and turns `addingProduct` into `fmaf` calls).
// A CPU without AVX2 cannot run such a build: set TENSORENGINE_BASELINE_CPU=1 when building for one.
// See docs/ARCHITECTURE.md, "CPU features".
#if arch(x86_64)
let cpuFlags: [SwiftSetting] = Context.environment["TENSORENGINE_BASELINE_CPU"] == nil
    ? [.unsafeFlags(["-target-cpu", "haswell"])] : []
#else
let cpuFlags: [SwiftSetting] = []
#endif

// scripts/fuzz.sh builds with TENSORENGINE_FUZZ=1. SwiftPM's fuzzer builds link libFuzzer's
// `main` into every executable, the kernel-embedding plugin's tool too, so that build takes the
// embedded kernels from a file the script generates (Sources/TensorEngine/Generated, ignored by
// git and removed afterwards) instead of running the plugin; other builds ignore that folder.
let fuzzing = Context.environment["TENSORENGINE_FUZZ"] != nil
let generatedKernels = "Generated"
let hasGeneratedKernels = FileManager.default.fileExists(atPath: Context.packageDirectory + "/Sources/TensorEngine/" + generatedKernels)

let package = Package(
    name: "TensorEngine",
    products: [
        .library(name: "TensorEngine", targets: ["TensorEngine"]),
        .executable(name: "tensor-demo", targets: ["tensor-demo"]),
        .executable(name: "tensorbench", targets: ["tensorbench"]),
        .executable(name: "tensorplan", targets: ["tensorplan"]),
        .executable(name: "tensorrun", targets: ["tensorrun"]),
        .executable(name: "tensorengine-check", targets: ["tensorengine-check"]),
        .executable(name: "embed-kernels", targets: ["embed-kernels"]),
        .plugin(name: "EmbedKernels", targets: ["EmbedKernels"]),
        .executable(name: "tensorembed", targets: ["tensorembed"]),
        .executable(name: "tensorfuzz", targets: ["tensorfuzz"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenBLAS", path: "Sources/COpenBLAS", pkgConfig: "openblas",
            providers: [.apt(["libopenblas-dev"])]),
        // Headers only (CL/cl.h, CL/cl_icd.h in /usr/include): no pkg-config, which would add
        // -lOpenCL. The backend opens libOpenCL.so.1 at run time (OpenCLLibrary), so binaries start
        // without it; ocl-icd-libopencl1 (pulled in by ocl-icd-opencl-dev) provides it at run time.
        .systemLibrary(
            name: "COpenCL", path: "Sources/COpenCL",
            providers: [.apt(["ocl-icd-opencl-dev", "opencl-c-headers"])]),
        // CPU instructions Swift cannot spell (streaming stores, reciprocal estimate): a header of
        // inline C functions, compiled into their Swift callers.
        .systemLibrary(name: "CIntrinsics", path: "Sources/CIntrinsics"),
        // Turns every `kernels/*.cl` into one generated Swift source (also usable from CMake:
        // `embed-kernels OUTPUT.swift INPUT.cl...`).
        .executableTarget(name: "embed-kernels"),
        .plugin(name: "EmbedKernels", capability: .buildTool(), dependencies: ["embed-kernels"]),
        .target(
            name: "TensorEngine",
            dependencies: ["COpenBLAS", "COpenCL", "CIntrinsics"],
            exclude: !fuzzing && hasGeneratedKernels ? [generatedKernels] : [],
            swiftSettings: cpuFlags,
            plugins: fuzzing ? [] : ["EmbedKernels"]),
        // What the tests and the tools check the engine with, kept out of the shipping module:
        // the parity harness and its cases, the error and fuzz checks, random graphs, the
        // benchmark workloads, plan quality, OpenCL fault injection and micro-benchmarks.
        .target(name: "TensorEngineChecks", dependencies: ["TensorEngine", "COpenCL"]),
        .executableTarget(name: "tensor-demo", dependencies: ["TensorEngine"]),
        // tensorbench's pure logic (statistics, report schema, comparison, table, SVG, arguments),
        // kept apart from the measuring executable so the tests can reach it.
        .target(name: "TensorBenchCore", dependencies: ["TensorEngine", "TensorEngineChecks"]),
        .executableTarget(
            name: "tensorbench",
            dependencies: ["TensorBenchCore", "TensorEngine", "TensorEngineChecks", "COpenBLAS"],
            swiftSettings: cpuFlags),
        .executableTarget(name: "tensorplan", dependencies: ["TensorEngine", "TensorEngineChecks"]),
        .executableTarget(name: "tensorrun", dependencies: ["TensorEngine"]),
        .executableTarget(name: "tensorengine-check", dependencies: ["TensorEngine", "TensorEngineChecks"]),
        .executableTarget(name: "opencl-bench", dependencies: ["TensorEngine", "TensorEngineChecks", "COpenBLAS"], swiftSettings: cpuFlags),
        .executableTarget(name: "tensorembed", dependencies: ["TensorEngine"]),
        // The fuzz targets; scripts/fuzz.sh builds them for libFuzzer (see docs/RELIABILITY.md).
        .executableTarget(name: "tensorfuzz", dependencies: ["TensorEngine", "TensorEngineChecks"]),
        .testTarget(name: "TensorEngineTests", dependencies: ["TensorEngine", "TensorEngineChecks"], resources: [.copy("Fixtures")]),
        .testTarget(name: "TensorBenchTests", dependencies: ["TensorBenchCore"]),
    ]
)
