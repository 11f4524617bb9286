// opencl-bench: the OpenCL backend's figures beside OpenBLAS on the same machine, in one run.
//
//   swift run -c release opencl-bench
//
// Prints matmul GFLOP/s (OpenCL kernel vs CLBlast's sgemm on the same queue, when libclblast is
// installed, vs cblas_sgemm) for 512, 1024 and 2048 (`opencl-bench compare`: that table alone), the
// fused elementwise chain in GB/s, kernel launch latency and host<->device transfer rates
// (`opencl-bench transfer`: the transfers alone).
import COpenBLAS
import Foundation
import TensorEngine
import TensorEngineChecks

// The cblas_sgemm rows run the kernels the engine's openblas backend runs.
OpenBLASCore.selectWidestKernels()

func sgemmGFLOPS(_ n: Int, repetitions: Int) -> Double {
    let a = [Float](repeating: 0.5, count: n * n)
    let b = [Float](repeating: 0.25, count: n * n)
    var c = [Float](repeating: 0, count: n * n)
    func run() {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(n), Int32(n), Int32(n), 1, a, Int32(n), b, Int32(n), 0, &c, Int32(n))
    }
    run()
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<repetitions { run() }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(repetitions)
    return 2 * Double(n * n * n) / seconds / 1e9
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

guard let device = OpenCLBenchmarks.device else {
    print("OpenCL is unavailable on this machine")
    exit(1)
}
print("device: \(device); host: \(ProcessInfo.processInfo.activeProcessorCount) cores")
if CommandLine.arguments.dropFirst().first == "matmul" {
    // Quick tuning runs: only the kernel at 1024 (set TENSORENGINE_OPENCL_MATMUL_TUNING).
    let n = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) } ?? 1024
    do { print("matmul \(n): \(format(try OpenCLBenchmarks.matmulGFLOPS(size: n, repetitions: 2))) GFLOP/s") } catch { print("error: \(error)") }
    exit(0)
}
/// Host<->device transfer rates for 64 MiB and for 64 KiB buffers.
func printTransfers() throws {
    for (bytes, label, repetitions) in [(64 << 20, "64 MiB", 5), (64 << 10, "64 KiB", 200)] {
        let transfer = try OpenCLBenchmarks.transferGBPerSecond(bytes: bytes, repetitions: repetitions)
        print("transfer \(label): host->device \(format(transfer.toDevice)) GB/s, device->host copy \(format(transfer.toHost)) GB/s, "
            + "zero-copy upload \(format(transfer.zeroCopyUpload)) GB/s, download as the backend does it \(format(transfer.download)) GB/s")
    }
}
if CommandLine.arguments.dropFirst().first == "transfer" {
    do { try printTransfers() } catch { print("error: \(error)") }
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "fused" {
    do {
        print("fused: \(format(try OpenCLBenchmarks.fusedChainGBPerSecond(count: 16 << 20, repetitions: 3))) GB/s")
        print("fused with negate instead of tanh: \(format(try OpenCLBenchmarks.fusedChainGBPerSecond(count: 16 << 20, repetitions: 3, withTanh: false))) GB/s")
    } catch { print("error: \(error)") }
    exit(0)
}
/// The matmul comparison: the engine's kernel, CLBlast on the same queue (when installed) and OpenBLAS.
func printMatmulTable() throws {
    let clblast = CLBlast.sgemm
    if case .failure(let why) = clblast { print(why) }
    print("| matmul n | opencl GFLOP/s | clblast GFLOP/s | openblas GFLOP/s | opencl / clblast | opencl / openblas |")
    print("| --- | --- | --- | --- | --- | --- |")
    for (n, repetitions) in [(512, 5), (1024, 2), (2048, 1)] {
        let cl = try OpenCLBenchmarks.matmulGFLOPS(size: n, repetitions: repetitions)
        // CLBlast compiles its kernels on the first call for a size: two untimed calls first.
        var otherText = ("skipped", "-")
        if case .success(let function) = clblast {
            let other = try OpenCLBenchmarks.externalMatmulGFLOPS(size: n, repetitions: repetitions, warmups: 2, CLBlast.product(function))
            otherText = (format(other), format(cl / other))
        }
        let blas = sgemmGFLOPS(n, repetitions: repetitions * 4)
        print("| \(n) | \(format(cl)) | \(otherText.0) | \(format(blas)) | \(otherText.1) | \(format(cl / blas)) |")
    }
}
if CommandLine.arguments.dropFirst().first == "compare" {
    do { try printMatmulTable() } catch { print("error: \(error)") }
    exit(0)
}
do {
    try printMatmulTable()
    let fused = try OpenCLBenchmarks.fusedChainGBPerSecond(count: 16 << 20, repetitions: 5)
    print("fused relu(a*b + c) * 0.5 + tanh(a), 16M floats: \(format(fused)) GB/s")
    let latency = try OpenCLBenchmarks.launchLatency(repetitions: 2000)
    print("launch latency: \(format(latency.single * 1e6)) µs waited, \(format(latency.queued * 1e6)) µs queued")
    try printTransfers()
} catch {
    print("error: \(error)")
    exit(1)
}
