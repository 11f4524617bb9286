import CIntrinsics
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Threads kept for the CPU kernels' parallel loops, which wait for the next loop by spinning for
/// a short while before they sleep.
///
/// A model at batch 1 runs hundreds of steps of a few microseconds each, most of them split
/// across the cores. `DispatchQueue.concurrentPerform` parks its threads in the kernel between
/// loops, and waking one takes several microseconds (a futex wake, a context switch): on a
/// two-core machine that was a sixth of a small transformer's time. The pool's helpers instead
/// watch a generation counter for ``spinDuration`` after their last piece of work (onnxruntime's
/// and OpenMP's thread pools do the same), so a loop that follows within that time starts on
/// every core at once; past it they sleep on a condition variable and cost nothing.
///
/// One loop runs on the pool at a time. A loop started while another holds it (a second thread
/// evaluating at the same time, or a loop nested in a piece) runs on `concurrentPerform`, as
/// every loop did before. The caller takes pieces too, so a loop never waits on a helper that has
/// not woken: pieces left unclaimed are the caller's.
final class WorkerPool: @unchecked Sendable {
    /// The pool for this process: one helper per core beyond the caller's, or `nil` on one core.
    static let shared: WorkerPool? = Parallel.workers > 1
        ? WorkerPool(helpers: Parallel.workers - 1, spinDuration: configuredSpin()) : nil

    /// How long a helper watches for the next loop before it sleeps: `TENSORENGINE_SPIN_US`
    /// microseconds (0 sleeps at once), or 200 µs.
    static func configuredSpin() -> Duration {
        let text = ProcessInfo.processInfo.environment["TENSORENGINE_SPIN_US"]
        let microseconds = text.flatMap { Int($0) }.map { max(0, min($0, 1_000_000)) } ?? 200
        return .microseconds(microseconds)
    }

    /// One parallel loop: its body, its size and the counters its threads share.
    private final class Loop: @unchecked Sendable {
        /// The loop's body, a closure on the caller's stack; only read for a claimed piece, and
        /// the caller waits for every claimed piece before its stack frame ends.
        let body: UnsafePointer<(Int) -> Void>
        let count: Int
        let nextPiece = Atomic<Int>(0)
        let finishedPieces = Atomic<Int>(0)

        init(body: UnsafePointer<(Int) -> Void>, count: Int) {
            self.body = body
            self.count = count
        }

        /// Claims and runs pieces until none is left.
        func work() {
            while true {
                let piece = nextPiece.wrappingAdd(1, ordering: .relaxed).oldValue
                guard piece < count else { return }
                body.pointee(piece)
                // Releasing: the piece's writes are seen by the caller that reads the count.
                finishedPieces.wrappingAdd(1, ordering: .releasing)
            }
        }

        var isFinished: Bool { finishedPieces.load(ordering: .acquiring) >= count }
    }

    private let spinDuration: Duration
    /// Set while a caller runs a loop on the pool.
    private let taken = Atomic<Bool>(false)
    /// Bumped for every loop posted; helpers watch it.
    private let generation = Atomic<UInt64>(0)
    /// The loop of the current generation (`nil` between loops).
    private let posted = Guarded<(generation: UInt64, loop: Loop?)>((0, nil))
    /// Set by ``park()``: helpers stop spinning and sleep until the next loop.
    private let parked = Atomic<Bool>(false)
    /// Helpers asleep or about to sleep on `wake`.
    private let sleepers = Atomic<Int>(0)
    private let sleepLock: UnsafeMutablePointer<pthread_mutex_t>
    private let wake: UnsafeMutablePointer<pthread_cond_t>

    private init(helpers: Int, spinDuration: Duration) {
        self.spinDuration = spinDuration
        sleepLock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(sleepLock, nil)
        wake = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        pthread_cond_init(wake, nil)
        for index in 0..<helpers {
            let thread = Thread { [unowned self] in self.helperLoop() }
            thread.name = "TensorEngine worker \(index + 1)"
            // The product kernels keep their packing space on the stack (about 100 KiB).
            thread.stackSize = 4 << 20
            thread.start()
        }
    }

    /// Runs `body(piece)` for every piece in `0..<pieces` on the pool's helpers and the calling
    /// thread, returning when all have finished. Returns `false`, running nothing, when another
    /// loop holds the pool.
    func run(pieces: Int, _ body: (Int) -> Void) -> Bool {
        guard taken.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else {
            return false
        }
        parked.store(false, ordering: .relaxed)
        withoutActuallyEscaping(body) { escapable in
            var closure = escapable
            withUnsafePointer(to: &closure) { pointer in
                let loop = Loop(body: pointer, count: pieces)
                let current = posted.withLock { state in
                    state.generation &+= 1
                    state.loop = loop
                    return state.generation
                }
                generation.store(current, ordering: .sequentiallyConsistent)
                if sleepers.load(ordering: .sequentiallyConsistent) > 0 {
                    pthread_mutex_lock(sleepLock)
                    pthread_cond_broadcast(wake)
                    pthread_mutex_unlock(sleepLock)
                }
                loop.work()
                // Only pieces a helper has claimed and is running are left: wait for them, and
                // after a while yield the core, in case the helper waits for one to run on.
                var spins = 0
                while !loop.isFinished {
                    te_spin_pause()
                    spins &+= 1
                    if spins > 4_096 { sched_yield() }
                }
                posted.withLock { $0.loop = nil }
            }
        }
        taken.store(false, ordering: .releasing)
        return true
    }

    /// Sends spinning helpers to sleep now, before work that needs every core for threads of its
    /// own (OpenBLAS's, for a product it splits itself); the next loop wakes them.
    func park() {
        parked.store(true, ordering: .relaxed)
    }

    /// A helper's life: wait for a generation it has not seen, join its loop, repeat.
    private func helperLoop() {
        var seen: UInt64 = 0
        while true {
            awaitGeneration(after: seen)
            let (current, loop) = posted.withLock { ($0.generation, $0.loop) }
            seen = current
            loop?.work()
        }
    }

    /// Returns once the generation differs from `seen`: spinning for up to `spinDuration`, then
    /// asleep on `wake`.
    private func awaitGeneration(after seen: UInt64) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: spinDuration)
        var spins = 0
        while generation.load(ordering: .acquiring) == seen {
            te_spin_pause()
            spins &+= 1
            if spins & 63 == 0, clock.now >= deadline || parked.load(ordering: .relaxed) { break }
        }
        guard generation.load(ordering: .acquiring) == seen else { return }
        // Counted as a sleeper before the last look, so that a caller posting after that look
        // sees the count and signals (both sides sequentially consistent).
        sleepers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        pthread_mutex_lock(sleepLock)
        while generation.load(ordering: .sequentiallyConsistent) == seen {
            pthread_cond_wait(wake, sleepLock)
        }
        pthread_mutex_unlock(sleepLock)
        sleepers.wrappingSubtract(1, ordering: .sequentiallyConsistent)
    }
}
