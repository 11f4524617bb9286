import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Every lock in the engine is a `Guarded<Value>`: the standard library's `Mutex`, except in
// ThreadSanitizer builds (scripts/sanitize.sh thread passes -DTENSORENGINE_TSAN).
//
// On Linux, `Mutex` takes a contended lock inside the kernel (a priority-inheriting futex), where
// ThreadSanitizer cannot see the hand-over, so it reports every contended critical section as a
// race (checked with a four-thread program and nothing but a `Mutex`). The TSan build uses a
// pthread mutex, which ThreadSanitizer intercepts, behind the same `withLock` interface; the code
// it checks is otherwise the same.

#if TENSORENGINE_TSAN
package typealias Guarded<Value> = PthreadGuarded<Value>
#else
package typealias Guarded<Value> = Mutex<Value>
#endif

/// A value behind a pthread mutex, with `Mutex`'s `withLock` interface (ThreadSanitizer builds).
package final class PthreadGuarded<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init(_ value: sending Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
