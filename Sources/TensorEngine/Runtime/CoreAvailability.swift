import Dispatch
import Foundation

/// How many of the machine's cores the process gets now: on a shared machine another tenant (a
/// build, another service) can hold a core for seconds at a time, and every figure measured
/// meanwhile describes the contended machine, not the device.
///
/// A first-use calibration measures it before and after its probes and marks profiles measured on
/// a busy machine (``DeviceProfile/measuredOnBusyMachine``), and `tensorbench` reports it beside
/// its rows.
package enum CoreAvailability {
    /// A calibration is made on a busy machine when its cores gave less than this share of their
    /// parallel rate: on 2 cores, less than 1.5× one core's rate. A quiet 2-core machine measures
    /// 1.9-2.0×; one with a tenant holding a core 1.0-1.4× (a calibration during a build measured
    /// products at a third of their rate, and every estimate was 3× its time until measured again).
    package static let busyShare = 0.75

    /// How many times one core's arithmetic rate `cores` threads give together, now: a loop of
    /// multiply-adds on registers (no memory traffic), timed on one thread and on one thread per
    /// core, the best of three of each (about 20 ms in all). A core that another tenant holds
    /// brings it toward 1.
    package static func parallelScaling(cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Double {
        guard cores > 1 else { return 1 }
        func best(_ run: () -> Void) -> Double {
            var fastest = Double.infinity
            for _ in 0..<3 {
                let start = DispatchTime.now().uptimeNanoseconds
                run()
                fastest = Swift.min(fastest, Double(DispatchTime.now().uptimeNanoseconds - start))
            }
            return fastest
        }
        let one = best { _ = arithmetic() }
        // A thread of its own per core: `concurrentPerform` runs an iteration on the calling
        // thread when its pool's thread is slow to wake, which measures the wake-up, not the cores.
        let all = best {
            let group = DispatchGroup()
            for _ in 1..<cores {
                group.enter()
                Thread {
                    _ = arithmetic()
                    group.leave()
                }.start()
            }
            _ = arithmetic()
            group.wait()
        }
        return Double(cores) * one / all
    }

    /// Whether a scaling of `scaling` over `cores` cores says the machine is busy (``busyShare``).
    package static func isBusy(scaling: Double, cores: Int) -> Bool {
        cores > 1 && scaling < busyShare * Double(cores)
    }

    /// A few milliseconds of multiply-adds on eight independent vectors, their sum returned so
    /// that the loop is kept.
    @inline(never)
    private static func arithmetic() -> Float {
        var sums = [SIMD8<Float>](repeating: SIMD8(repeating: 0.5), count: 8)
        let (scale, step) = (SIMD8<Float>(repeating: 0.999_9), SIMD8<Float>(repeating: 0.000_1))
        for _ in 0..<200_000 {
            for lane in 0..<8 { sums[lane] = sums[lane] * scale + step }
        }
        return sums.reduce(SIMD8<Float>(repeating: 0), +).sum()
    }
}
