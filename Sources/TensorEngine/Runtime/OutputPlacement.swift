/// Where the executor asks a step to write its result: a part of a host buffer made for a later
/// concatenation, so that the concatenation finds its operands already in place and copies nothing.
///
/// A backend that cannot write there ignores it and returns a buffer of its own, as usual; the
/// concatenation then copies that operand. See ``ConcatPlacements`` for when the executor asks.
package struct OutputPlacement: @unchecked Sendable {
    /// The concatenation's result buffer, 64-byte aligned like any fresh host buffer.
    let buffer: HostBuffer
    /// The element of ``buffer`` where the result starts (its byte offset a multiple of 64, so
    /// that a kernel finds the alignment a fresh buffer gives).
    let elementOffset: Int

    /// The placement's elements of a result of `signature`, row-major from ``elementOffset``, or
    /// `nil` when they would not fit in the buffer.
    func value(_ signature: TensorSignature) -> (value: Value, start: UnsafeMutableRawPointer)? {
        let size = signature.scalarType.byteCount
        guard elementOffset >= 0, (elementOffset + signature.elementCount) * size <= buffer.byteCount else {
            return nil
        }
        let contiguous = Layout(contiguous: signature.shape)
        let layout = Layout(shape: contiguous.shape, strides: contiguous.strides, offset: elementOffset)
        let value = Value(buffer: buffer, layout: layout, scalarType: signature.scalarType)
        return (value, buffer.pointer + elementOffset * size)
    }
}
