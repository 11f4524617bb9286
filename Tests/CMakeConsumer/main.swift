import TensorEngine

#if canImport(Glibc)
import Glibc
#endif

// Builds a small graph against the installed TensorEngine, materializes it and checks the value:
// relu([[1, -2], [3, 4]] · [[1, 0], [0, -1]] + 0.5) summed = relu([[1.5, 2.5], [3.5, -3.5]]) = 7.5.
let a = Tensor(shape: [2, 2], scalars: [1, -2, 3, 4] as [Float])
let b = Tensor(shape: [2, 2], scalars: [1, 0, 0, -1] as [Float])
let total = (a.matmul(b) + 0.5).relu().sum()

do {
    let result = try await total.shapedArray(of: Float.self)
    let value = result.scalars.first ?? .nan
    guard result.scalars.count == 1, abs(value - 7.5) < 1e-5 else {
        print("consumer: expected 7.5, got \(result.scalars)")
        exit(1)
    }
    print("consumer: relu(a·b + 0.5).sum() = \(value), as expected")
} catch {
    print("consumer: materializing failed: \(error)")
    exit(1)
}
