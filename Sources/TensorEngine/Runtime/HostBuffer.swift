#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Memory that some backend owns: host memory for the CPU backends, device memory for OpenCL.
package protocol DeviceBuffer: AnyObject, Sendable {
    /// The size of the allocation in bytes.
    var byteCount: Int { get }
    /// Where the memory lives; values in one memory space can be used by every backend of it.
    var memorySpace: MemorySpace { get }
    /// The append cursor of a buffer laid out for growth along an axis (``OpKind/append``), or
    /// `nil` for an ordinary buffer.
    var growth: GrowthCursor? { get }
}

/// A place memory lives in. The naive and openblas backends share the host.
package enum MemorySpace: Sendable, Hashable, CustomStringConvertible {
    case host
    /// Memory of one OpenCL device, named by the device's index in the runtime.
    case openCL(device: Int)

    package var description: String {
        switch self {
        case .host: "host"
        case .openCL(let device): "opencl:\(device)"
        }
    }
}

/// A block of host memory, released when the last reference goes.
///
/// Usually the buffer owns memory it allocated, 64-byte aligned. A buffer made with
/// ``init(borrowing:byteCount:owner:)`` instead views memory another object keeps alive (a
/// memory-mapped weights file), aligned only to its element type; it frees nothing and holds the
/// owner until it goes. Kernels must therefore not assume more than element alignment for their
/// inputs (vector loads use `loadUnaligned`).
///
/// Written only while the executor builds the value in it, then read-only, except that an append
/// writes a growable buffer's positions past its filled prefix (claimed through its ``growth``
/// cursor, seen by no one before); hence `@unchecked Sendable`.
package final class HostBuffer: DeviceBuffer, @unchecked Sendable {
    package let pointer: UnsafeMutableRawPointer
    package let byteCount: Int
    /// The object that keeps borrowed memory alive, or `nil` when the buffer owns its memory.
    let owner: (any AnyObject & Sendable)?
    package var memorySpace: MemorySpace { .host }
    package let growth: GrowthCursor?

    /// The bytes actually allocated (whole pages for pooled sizes; a reused block may be larger).
    private let capacity: Int

    /// Allocates uninitialised memory (reusing a pooled block when one fits), or throws
    /// ``TensorError/Kind/outOfMemory``.
    ///
    /// Blocks of two huge pages (4 MiB) and more are aligned to a huge page and asked to be backed
    /// by transparent huge pages (`madvise(MADV_HUGEPAGE)`, which Debian's kernels honour in their
    /// default `madvise` mode): a fresh block then faults in 2 MiB at a time, and a kernel that
    /// strides across rows misses the TLB far less. Measured on 2 cores, builds interleaved:
    /// transpose-4096 0.87 of its time with 4 KiB pages, layernorm-1024 0.73, eltwise-16m 0.79-0.86,
    /// mean-all 0.89-0.91, sum-rows 0.92-0.95; products unchanged.
    package init(byteCount: Int, op: String = "allocate", growth: GrowthCursor? = nil) throws(TensorError) {
        var capacity = HostBufferPool.capacity(for: byteCount)
        if let recycled = HostBufferPool.shared.take(capacity) {
            self.pointer = recycled.pointer
            capacity = recycled.capacity
        } else {
            var raw: UnsafeMutableRawPointer?
            let large = capacity >= HostBufferPool.hugePageBytes * 2
            let status = posix_memalign(&raw, large ? HostBufferPool.hugePageBytes : 64, capacity)
            guard status == 0, let raw else {
                throw TensorError(.outOfMemory, op: op, message: "cannot allocate \(byteCount) bytes of host memory")
            }
            #if canImport(Glibc)
                if large { _ = madvise(raw, capacity, MADV_HUGEPAGE) }
            #endif
            self.pointer = raw
        }
        self.byteCount = byteCount
        self.capacity = capacity
        self.owner = nil
        self.growth = growth
    }

    /// Views `byteCount` bytes at `pointer` that `owner` keeps alive, without copying.
    ///
    /// The caller guarantees that `pointer` is aligned to the element type stored there and that
    /// the memory stays valid and unchanged while `owner` lives.
    package init(borrowing pointer: UnsafeMutableRawPointer, byteCount: Int, owner: any AnyObject & Sendable) {
        self.pointer = pointer
        self.byteCount = byteCount
        self.capacity = byteCount
        self.owner = owner
        self.growth = nil
    }

    deinit {
        if owner == nil { HostBufferPool.shared.give(pointer, capacity: capacity) }
    }

    /// The memory as elements of `T`.
    package func elements<T>(as type: T.Type) -> UnsafeMutablePointer<T> {
        pointer.assumingMemoryBound(to: T.self)
    }
}

/// A tensor's data during execution: a buffer, the layout of the elements in it, and their type.
package struct Value: @unchecked Sendable {
    package let buffer: any DeviceBuffer
    package let layout: Layout
    package let scalarType: ScalarType

    package init(buffer: any DeviceBuffer, layout: Layout, scalarType: ScalarType) {
        self.buffer = buffer
        self.layout = layout
        self.scalarType = scalarType
    }

    package var shape: [Int] { layout.shape }
    var memorySpace: MemorySpace { buffer.memorySpace }

    /// The value with another layout over the same buffer.
    package func with(_ layout: Layout) -> Value { Value(buffer: buffer, layout: layout, scalarType: scalarType) }
}
