import Foundation
import TensorEngine

// A small graph: a two-layer perceptron on random data, evaluated once, then timed.
let x = Tensor(randomNormal: [64, 784], seed: 1)
let w1 = Tensor(randomNormal: [784, 512], standardDeviation: 0.05, seed: 2)
let w2 = Tensor(randomNormal: [512, 10], standardDeviation: 0.05, seed: 3)
let probabilities = x.matmul(w1).relu().matmul(w2).softmax(alongAxis: -1)

do {
    let start = Date()
    let result = try await probabilities.shapedArray(of: Float.self)
    let seconds = Date().timeIntervalSince(start)
    print("probabilities \(result.shape), first row: \(result.scalars.prefix(10).map { String(format: "%.4f", $0) })")
    print("row sums to \(result.scalars.prefix(10).reduce(0, +)); evaluated in \(String(format: "%.2f", seconds * 1000)) ms")
} catch {
    print("error: \(error)")
    exit(1)
}
