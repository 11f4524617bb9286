import Foundation

/// The element type of a ``MultiArray``, like Core ML's `MLMultiArrayDataType`.
public enum MultiArrayDataType: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 64-bit floating point (`Double`).
    case double
    /// 32-bit floating point (`Float`).
    case float32
    /// 16-bit floating point (`Float16`).
    case float16
    /// 32-bit signed integer (`Int32`).
    case int32

    /// Core ML's other name for ``double``.
    public static var float64: MultiArrayDataType { .double }
    /// Core ML's other name for ``float32``.
    public static var float: MultiArrayDataType { .float32 }

    /// The size of one element in bytes.
    public var byteCount: Int {
        switch self {
        case .double: 8
        case .float32, .int32: 4
        case .float16: 2
        }
    }

    /// The engine scalar type that holds the values in a ``Tensor``.
    public var scalarType: ScalarType {
        switch self {
        case .double: .float64
        case .float32: .float32
        case .float16: .float16
        case .int32: .int32
        }
    }

    /// The data type of an engine scalar type. `Bool` and `Int64` have none (as in Core ML): they
    /// are held as `Int32`.
    init(_ type: ScalarType) {
        switch type {
        case .float64: self = .double
        case .int64: self = .int32
        case .float32: self = .float32
        case .float16: self = .float16
        case .int32, .bool: self = .int32
        }
    }

    /// `float32`, `double`, ...
    public var description: String {
        switch self {
        case .double: "double"
        case .float32: "float32"
        case .float16: "float16"
        case .int32: "int32"
        }
    }
}

/// A Swift type a ``MultiArray`` can hold: `Double`, `Float`, `Float16` and `Int32`.
public protocol MultiArrayScalar: Sendable {
    /// The data type of arrays of this scalar.
    static var multiArrayDataType: MultiArrayDataType { get }
    /// The value as a `Double`.
    var multiArrayDouble: Double { get }
    /// The scalar nearest to `value` (integers truncate toward zero and saturate).
    init(multiArrayDouble value: Double)
}

extension Double: MultiArrayScalar {
    /// `.double`.
    public static var multiArrayDataType: MultiArrayDataType { .double }
    /// The value itself.
    public var multiArrayDouble: Double { self }
    /// The value itself.
    public init(multiArrayDouble value: Double) { self = value }
}

extension Float: MultiArrayScalar {
    /// `.float32`.
    public static var multiArrayDataType: MultiArrayDataType { .float32 }
    /// The value widened.
    public var multiArrayDouble: Double { Double(self) }
    /// The nearest `Float`.
    public init(multiArrayDouble value: Double) { self = Float(value) }
}

extension Float16: MultiArrayScalar {
    /// `.float16`.
    public static var multiArrayDataType: MultiArrayDataType { .float16 }
    /// The value widened.
    public var multiArrayDouble: Double { Double(self) }
    /// The nearest `Float16`.
    public init(multiArrayDouble value: Double) { self = Float16(value) }
}

extension Int32: MultiArrayScalar {
    /// `.int32`.
    public static var multiArrayDataType: MultiArrayDataType { .int32 }
    /// The value widened.
    public var multiArrayDouble: Double { Double(self) }
    /// The value truncated toward zero, saturated at `Int32`'s bounds (`NaN` gives 0).
    public init(multiArrayDouble value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Int32.max) {
            self = .max
        } else if value <= Double(Int32.min) {
            self = .min
        } else {
            self = Int32(value)
        }
    }
}

/// The memory of a ``MultiArray``: allocated by it, lent by the caller with a deallocator, or
/// borrowed read-only from an engine result or a ``ShapedArray``.
final class MultiArrayStorage: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
    let byteCount: Int
    /// Whether the memory belongs to an engine result or an array with value semantics: writes
    /// through the multi-array copy it first.
    let isBorrowed: Bool
    private let release: (@Sendable (UnsafeMutableRawPointer) -> Void)?
    /// Keeps the lender of borrowed memory alive.
    private let owner: AnyObject?

    /// Zeroed memory of `byteCount` bytes, 64-byte aligned.
    init(zeroedByteCount byteCount: Int) {
        pointer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(byteCount, 1), alignment: 64)
        pointer.initializeMemory(as: UInt8.self, repeating: 0, count: Swift.max(byteCount, 1))
        self.byteCount = byteCount
        isBorrowed = false
        owner = nil
        release = { $0.deallocate() }
    }

    /// Memory the caller lends; `release` runs when the storage goes.
    init(
        lent pointer: UnsafeMutableRawPointer, byteCount: Int,
        release: @escaping @Sendable (UnsafeMutableRawPointer) -> Void
    ) {
        self.pointer = pointer
        self.byteCount = byteCount
        isBorrowed = false
        owner = nil
        self.release = release
    }

    /// Memory `owner` keeps alive and the array must not write.
    init(borrowing pointer: UnsafeMutableRawPointer, byteCount: Int, owner: AnyObject) {
        self.pointer = pointer
        self.byteCount = byteCount
        isBorrowed = true
        self.owner = owner
        release = nil
    }

    deinit { release?(pointer) }
}

/// A multidimensional array of numbers, like Core ML's `MLMultiArray`: a reference to memory of
/// one ``MultiArrayDataType``, with a shape and strides in elements.
///
/// ```swift
/// let array = try MultiArray(shape: [1, 3, 224, 224], dataType: .float32)
/// for i in 0..<array.count { array[i] = NSNumber(value: Float.random(in: 0...1)) }
/// let input = try DictionaryFeatureProvider(dictionary: ["image": FeatureValue(multiArray: array)])
/// ```
///
/// Conversions share memory: `Tensor(array)` and `ShapedArray(array)` wrap the array's memory (a
/// `double` array is converted to `Float`, a strided one gathered), and an array made from a
/// tensor's result or a ``ShapedArray`` wraps theirs. Once memory is shared, the array copies it
/// before its next write (``withUnsafeMutableBytes(_:)``, a subscript set, ``dataPointer``), so a
/// tensor or shaped array keeps the values it was made with: reading is never a copy, and writing
/// copies at most once per sharing.
public final class MultiArray: @unchecked Sendable, CustomStringConvertible {
    /// The element type.
    public let dataType: MultiArrayDataType
    /// The sizes, as Core ML gives them.
    public var shape: [NSNumber] { sizes.map { NSNumber(value: $0) } }
    /// The distance between neighbours along each axis, in elements.
    public var strides: [NSNumber] { elementStrides.map { NSNumber(value: $0) } }
    /// The number of elements.
    public let count: Int

    /// The sizes as integers.
    let sizes: [Int]
    /// The strides as integers.
    let elementStrides: [Int]
    /// The memory, replaced by a private copy before the first write to borrowed memory.
    private let memory: Guarded<MultiArrayStorage>

    /// Creates a zeroed array of `shape` (row-major).
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` for a negative size or a shape too large to exist.
    public convenience init(shape: [NSNumber], dataType: MultiArrayDataType) throws(ModelError) {
        let sizes = shape.map(\.intValue)
        let count = try MultiArray.elementCount(sizes, dataType)
        self.init(
            storage: MultiArrayStorage(zeroedByteCount: count * dataType.byteCount), sizes: sizes,
            strides: Shape.contiguousStrides(sizes), dataType: dataType)
    }

    /// Creates a zeroed array of `shape` laid out with `strides` (in elements; each at least the
    /// extent of the axes after it, as Core ML requires).
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` for strides that overlap elements, a negative
    ///   size, or a shape too large to exist.
    public convenience init(shape: [NSNumber], dataType: MultiArrayDataType, strides: [NSNumber]) throws(ModelError) {
        let sizes = shape.map(\.intValue)
        let steps = strides.map(\.intValue)
        let span = try MultiArray.span(sizes, steps, dataType)
        self.init(
            storage: MultiArrayStorage(zeroedByteCount: span * dataType.byteCount), sizes: sizes, strides: steps,
            dataType: dataType)
    }

    /// Wraps memory the caller owns without copying it; `deallocator` runs when the array goes.
    ///
    /// - Throws: ``ModelError/Kind/invalidInput`` for a bad shape or strides (the deallocator is
    ///   not run then: the memory stays the caller's).
    public convenience init(
        dataPointer: UnsafeMutableRawPointer, shape: [NSNumber], dataType: MultiArrayDataType, strides: [NSNumber],
        deallocator: (@Sendable (UnsafeMutableRawPointer) -> Void)? = nil
    ) throws(ModelError) {
        let sizes = shape.map(\.intValue)
        let steps = strides.map(\.intValue)
        let span = try MultiArray.span(sizes, steps, dataType)
        let storage = MultiArrayStorage(
            lent: dataPointer, byteCount: span * dataType.byteCount, release: deallocator ?? { _ in })
        self.init(storage: storage, sizes: sizes, strides: steps, dataType: dataType)
    }

    /// A one-dimensional array of `values`, like Core ML's `MLMultiArray(_:)` for Swift arrays.
    public convenience init<C: Collection>(_ values: C) throws(ModelError) where C.Element: MultiArrayScalar {
        try self.init(shape: [NSNumber(value: values.count)], dataType: C.Element.multiArrayDataType)
        let base = memory.withLock { $0.pointer }.bindMemory(to: C.Element.self, capacity: values.count)
        for (index, value) in values.enumerated() { base[index] = value }
    }

    init(storage: MultiArrayStorage, sizes: [Int], strides: [Int], dataType: MultiArrayDataType) {
        memory = Guarded(storage)
        self.sizes = sizes
        elementStrides = strides
        self.dataType = dataType
        count = sizes.reduce(1, *)
    }

    /// The number of elements of `sizes`, checked.
    static func elementCount(_ sizes: [Int], _ type: MultiArrayDataType) throws(ModelError) -> Int {
        guard sizes.allSatisfy({ $0 >= 0 }) else {
            throw ModelError(.invalidInput, "a multi-array's sizes must not be negative, given \(describe(sizes))")
        }
        guard let count = Shape.elementCount(sizes), !count.multipliedReportingOverflow(by: type.byteCount).overflow
        else {
            throw ModelError(.invalidInput, "a multi-array of shape \(describe(sizes)) of \(type) is too large")
        }
        return count
    }

    /// The elements memory must hold for `sizes` at `strides`, checked for overlap and overflow.
    static func span(_ sizes: [Int], _ strides: [Int], _ type: MultiArrayDataType) throws(ModelError) -> Int {
        let count = try elementCount(sizes, type)
        guard strides.count == sizes.count else {
            throw ModelError(.invalidInput, "\(strides.count) strides for a shape of rank \(sizes.count)")
        }
        if count == 0 { return 0 }
        // Walking from the innermost axis, each stride must step past everything inside it.
        var extent = 1
        for (size, stride) in zip(sizes, strides).reversed() {
            guard stride >= extent || size == 1 else {
                throw ModelError(
                    .invalidInput, "strides \(describe(strides)) overlap elements of shape \(describe(sizes))")
            }
            let (reach, overflow) = (size - 1).multipliedReportingOverflow(by: Swift.max(stride, 0))
            guard !overflow, reach < Int.max / 16, extent < Int.max / 2 else {
                throw ModelError(.invalidInput, "strides \(describe(strides)) are too large")
            }
            extent += reach
        }
        guard !extent.multipliedReportingOverflow(by: type.byteCount).overflow else {
            throw ModelError(.invalidInput, "strides \(describe(strides)) are too large")
        }
        return extent
    }

    /// Whether the elements lie in row-major order with no gaps.
    var isContiguous: Bool { count == 0 || elementStrides == Shape.contiguousStrides(sizes) }

    /// The memory for reading.
    var readStorage: MultiArrayStorage { memory.withLock { $0 } }

    /// The memory for writing: borrowed memory is copied into the array's own first.
    var writeStorage: MultiArrayStorage {
        memory.withLock { storage in
            guard storage.isBorrowed else { return storage }
            let copy = MultiArrayStorage(zeroedByteCount: storage.byteCount)
            if storage.byteCount > 0 { copy.pointer.copyMemory(from: storage.pointer, byteCount: storage.byteCount) }
            storage = copy
            return copy
        }
    }

    /// The memory, for a tensor or shaped array to read in place: from here on the array treats
    /// it as borrowed and copies it before its next write, so the reader's values never change.
    func sharedStorage() -> MultiArrayStorage {
        memory.withLock { storage in
            guard !storage.isBorrowed else { return storage }
            let shared = storage
            storage = MultiArrayStorage(borrowing: shared.pointer, byteCount: shared.byteCount, owner: shared)
            return shared
        }
    }

    /// The array's memory. The pointer may be written: an array that borrows memory (from a
    /// tensor's result or a ``ShapedArray``) copies it first. To read without that copy, use
    /// ``withUnsafeBytes(_:)``.
    public var dataPointer: UnsafeMutableRawPointer { writeStorage.pointer }

    /// Calls `body` with the array's bytes (in its strides' layout), read in place.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let storage = readStorage
        return try withExtendedLifetime(storage) {
            try body(UnsafeRawBufferPointer(start: storage.pointer, count: storage.byteCount))
        }
    }

    /// Calls `body` with the array's bytes for writing, and the strides in elements.
    public func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer, [Int]) throws -> R) rethrows -> R {
        let storage = writeStorage
        return try withExtendedLifetime(storage) {
            try body(UnsafeMutableRawBufferPointer(start: storage.pointer, count: storage.byteCount), elementStrides)
        }
    }

    /// Calls `body` with the elements as `S`, in the array's layout. When `S` is not the array's
    /// type, `body` reads a converted copy.
    public func withUnsafeBufferPointer<S: MultiArrayScalar, R>(
        ofType type: S.Type, _ body: (UnsafeBufferPointer<S>) throws -> R
    ) rethrows -> R {
        let storage = readStorage
        let span = storage.byteCount / dataType.byteCount
        if S.multiArrayDataType == dataType {
            return try withExtendedLifetime(storage) {
                try body(UnsafeBufferPointer(start: storage.pointer.assumingMemoryBound(to: S.self), count: span))
            }
        }
        let converted = (0..<span).map { S(multiArrayDouble: MultiArray.double(at: $0, of: storage, dataType)) }
        return try converted.withUnsafeBufferPointer(body)
    }

    /// Calls `body` with the elements as `S` for writing, and the strides. When `S` is not the
    /// array's type, `body` writes a converted copy that is converted back afterwards.
    public func withUnsafeMutableBufferPointer<S: MultiArrayScalar, R>(
        ofType type: S.Type, _ body: (UnsafeMutableBufferPointer<S>, [Int]) throws -> R
    ) rethrows -> R {
        let storage = writeStorage
        let span = storage.byteCount / dataType.byteCount
        if S.multiArrayDataType == dataType {
            return try withExtendedLifetime(storage) {
                let buffer = UnsafeMutableBufferPointer(
                    start: storage.pointer.assumingMemoryBound(to: S.self), count: span)
                return try body(buffer, elementStrides)
            }
        }
        var converted = (0..<span).map { S(multiArrayDouble: MultiArray.double(at: $0, of: storage, dataType)) }
        defer {
            for (index, value) in converted.enumerated() {
                MultiArray.set(value.multiArrayDouble, at: index, of: storage, dataType)
            }
        }
        return try converted.withUnsafeMutableBufferPointer { try body($0, elementStrides) }
    }

    /// The element at `index` (row-major over the shape), as Core ML's linear subscript; an index
    /// out of range reads `NaN` and writes nothing.
    public subscript(index: Int) -> NSNumber {
        get { NSNumber(value: value(at: index)) }
        set { setValue(newValue.doubleValue, at: index) }
    }

    /// The element at the given indices (one per axis); indices out of range read `NaN` and write
    /// nothing.
    public subscript(key: [NSNumber]) -> NSNumber {
        get {
            NSNumber(
                value: offset(of: key.map(\.intValue)).map { MultiArray.double(at: $0, of: readStorage, dataType) }
                    ?? .nan)
        }
        set {
            guard let offset = offset(of: key.map(\.intValue)) else { return }
            MultiArray.set(newValue.doubleValue, at: offset, of: writeStorage, dataType)
        }
    }

    /// The element at `index` (row-major) as a `Double`, or `NaN` out of range.
    func value(at index: Int) -> Double {
        guard let offset = offset(ofLinear: index) else { return .nan }
        return MultiArray.double(at: offset, of: readStorage, dataType)
    }

    /// Writes the element at `index` (row-major); nothing out of range.
    func setValue(_ value: Double, at index: Int) {
        guard let offset = offset(ofLinear: index) else { return }
        MultiArray.set(value, at: offset, of: writeStorage, dataType)
    }

    /// The memory offset of the row-major element `index`.
    private func offset(ofLinear index: Int) -> Int? {
        guard index >= 0, index < count else { return nil }
        if isContiguous { return index }
        var rest = index
        var offset = 0
        for axis in sizes.indices.reversed() {
            offset += (rest % sizes[axis]) * elementStrides[axis]
            rest /= sizes[axis]
        }
        return offset
    }

    /// The memory offset of the element at `indices`.
    private func offset(of indices: [Int]) -> Int? {
        guard indices.count == sizes.count else { return nil }
        var offset = 0
        for (axis, index) in indices.enumerated() {
            guard index >= 0, index < sizes[axis] else { return nil }
            offset += index * elementStrides[axis]
        }
        return offset
    }

    static func double(at offset: Int, of storage: MultiArrayStorage, _ type: MultiArrayDataType) -> Double {
        let base = storage.pointer
        switch type {
        case .double: return base.load(fromByteOffset: offset * 8, as: Double.self)
        case .float32: return Double(base.load(fromByteOffset: offset * 4, as: Float.self))
        case .float16: return Double(base.load(fromByteOffset: offset * 2, as: Float16.self))
        case .int32: return Double(base.load(fromByteOffset: offset * 4, as: Int32.self))
        }
    }

    static func set(_ value: Double, at offset: Int, of storage: MultiArrayStorage, _ type: MultiArrayDataType) {
        let base = storage.pointer
        switch type {
        case .double: base.storeBytes(of: value, toByteOffset: offset * 8, as: Double.self)
        case .float32: base.storeBytes(of: Float(value), toByteOffset: offset * 4, as: Float.self)
        case .float16: base.storeBytes(of: Float16(value), toByteOffset: offset * 2, as: Float16.self)
        case .int32: base.storeBytes(of: Int32(multiArrayDouble: value), toByteOffset: offset * 4, as: Int32.self)
        }
    }

    /// `MultiArray(float32 [1, 3], [0.5, 1.0, 2.0])`, with at most 16 elements shown.
    public var description: String {
        let shown = (0..<Swift.min(count, 16)).map { "\(value(at: $0))" }.joined(separator: ", ")
        return "MultiArray(\(dataType) \(describe(sizes)), [\(shown)\(count > 16 ? ", ..." : "")])"
    }
}
