import Dispatch
import Foundation

/// When and how the CPU kernels split work across threads.
///
/// Splitting costs a fixed dispatch overhead (about 5–10 µs for two workers with
/// `concurrentPerform` when they sleep, about 1 µs on the ``WorkerPool`` when its helpers are
/// still spinning); streaming a float costs about 0.1–0.3 ns. Work below
/// ``minimumElementsPerWorker`` elements per worker runs on the calling thread. The figure is a
/// measured crossover (see `bench/RESULTS.md`), and the planner's profile sees the thread count.
enum Parallel {
    /// Worker threads: the machine's active cores.
    static let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Elements of streaming work per worker below which splitting does not pay.
    static let minimumElementsPerWorker = 8_192

    /// How many workers `elements` of streaming work deserves.
    static func workerCount(forElements elements: Int, costPerElement: Int = 1) -> Int {
        max(1, min(workers, elements * costPerElement / minimumElementsPerWorker))
    }

    /// `wanted` pieces of equal work made a multiple of the workers when there are more pieces
    /// than workers, so that none is left with a piece more than the others: 3 pieces on 2
    /// workers finish when one of them has done 2, a third later than 2 pieces would.
    static func balancedPieces(_ wanted: Int, workers: Int = workers) -> Int {
        wanted > workers ? wanted - wanted % workers : wanted
    }

    /// Runs `body(range)` over `0..<count` split into `parts` contiguous ranges (aligned to
    /// `alignment`), in parallel when `parts > 1`.
    static func forEachRange(_ count: Int, parts: Int, alignment: Int = 1, _ body: (Range<Int>) -> Void) {
        guard parts > 1, count > alignment else {
            body(0..<count)
            return
        }
        let chunk = ((count + parts - 1) / parts + alignment - 1) / alignment * alignment
        let pieces = (count + chunk - 1) / chunk
        // The pieces write disjoint ranges, so sharing the closure across threads is safe.
        withoutActuallyEscaping(body) { escapable in
            let shared = UncheckedSendable(escapable)
            let piece = { @Sendable (piece: Int) in
                let start = piece * chunk
                shared.value(start..<min(count, start + chunk))
            }
            if let pool = WorkerPool.shared, pool.run(pieces: pieces, piece) { return }
            DispatchQueue.concurrentPerform(iterations: pieces, execute: piece)
        }
    }
}

/// A value shared across the workers of one parallel loop, which touch disjoint memory.
struct UncheckedSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
