import Foundation
import TensorEngine

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
let n = Int(CommandLine.arguments.dropFirst().first ?? "64") ?? 64
let a = Tensor(randomNormal: [n, n], seed: 1)
let b = Tensor(randomNormal: [n, n], seed: 2)
_ = try await a.shapedArray(of: Float.self); _ = try await b.shapedArray(of: Float.self)
let iterations = 20000
@Sendable func best(_ label: String, _ body: () async throws -> Void) async rethrows {
    var times: [UInt64] = []
    for _ in 0..<iterations { let t = now(); try await body(); times.append(now() - t) }
    times.sort()
    print(label, "min", Double(times[0]) / 1000, "med", Double(times[times.count / 2]) / 1000, "µs")
}
func probe() async throws {
for _ in 0..<2 {
    await best("record only        ") { _ = a.matmul(b) }
    try await best("record+eval        ") { let c = a.matmul(b); try await Tensor.evaluate([c]) }
    try await best("record+eval+read   ") { let c = a.matmul(b); try await Tensor.evaluate([c]); _ = try await c.shapedArray(of: Float.self) }
    try await best("record+shapedArray ") { let c = a.matmul(b); _ = try await c.shapedArray(of: Float.self) }
    try await best("add record+eval    ") { let c = a + b; try await Tensor.evaluate([c]) }
}
}
try await Task.detached { try await probe() }.value
if CommandLine.arguments.count > 2 {
    try await Task.detached {
        for _ in 0..<2_000_000 { let c = a.matmul(b); _ = try await c.shapedArray(of: Float.self) }
    }.value
}
