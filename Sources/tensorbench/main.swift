import Foundation
import TensorBenchCore
import TensorEngine
import TensorEngineChecks

// OpenBLAS's own choice of kernels can be narrower than the CPU's; the engine widens it before its
// first product, and the bare BLAS rows must run the same kernels, whichever row comes first.
OpenBLASCore.selectWidestKernels()

// tensorbench: parses the command line, measures (or loads) a report, and prints and writes it.
// Exit status: 0 success, 1 a run or file failure, 2 a bad command line.

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

let command: BenchCommand
do {
    command = try ArgumentParser.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(error.description, status: ArgumentError.exitCode)
}

switch command {
case .help:
    print(ArgumentParser.helpText)
case .list:
    print(WorkloadList.rendered())
case .openCLMatmul(let sizes):
    guard let device = OpenCLBenchmarks.device else { fail("tensorbench: OpenCL is unavailable on this machine", status: 1) }
    print("device: \(device)")
    for n in sizes {
        do {
            // About a second of products at each size, at least two.
            let repetitions = max(2, min(100, Int(1e12 / (2 * Double(n) * Double(n) * Double(n)))))
            let gflops = try OpenCLBenchmarks.matmulGFLOPS(size: n, repetitions: repetitions)
            print(String(format: "opencl matmul %d: %.1f GFLOP/s (kernel alone, inputs on the device, %d repetitions)", n, gflops, repetitions))
        } catch {
            fail("tensorbench: opencl matmul \(n): \(error)", status: 1)
        }
    }
case .run(let options):
    let report: BenchReport
    if let from = options.fromPath {
        do { report = try BenchReport.load(path: from) } catch { fail("tensorbench: \(error.description)", status: 1) }
    } else {
        report = await BenchRunner(options: options).run()
    }
    print(Summary.header(report))
    print(ReportTable.rendered(report))
    var status: Int32 = 0
    if let path = options.jsonPath {
        do {
            try report.encoded().write(to: URL(fileURLWithPath: path))
            print("wrote \(path)")
        } catch {
            FileHandle.standardError.write(Data("tensorbench: cannot write \(path): \(error.localizedDescription)\n".utf8))
            status = 1
        }
    }
    if let path = options.svgPath {
        let chart = SVGChart(rows: report.rows, title: "tensorbench \(report.suite): median latency per run (\(report.machine.cpuModel), \(report.machine.cores) cores)")
        do {
            try Data(chart.rendered().utf8).write(to: URL(fileURLWithPath: path))
            print("wrote \(path)")
        } catch {
            FileHandle.standardError.write(Data("tensorbench: cannot write \(path): \(error.localizedDescription)\n".utf8))
            status = 1
        }
    }
    if let path = options.comparePath {
        do {
            let old = try BenchReport.load(path: path)
            print("\ncompared with \(path) (\(old.tool), \(old.created)); new/old < 1 is faster; marked when the min…p90 spreads do not overlap")
            print(Comparison.table(Comparison.entries(new: report, old: old)))
        } catch {
            FileHandle.standardError.write(Data("tensorbench: \(error.description)\n".utf8))
            status = 1
        }
    }
    exit(status)
}
