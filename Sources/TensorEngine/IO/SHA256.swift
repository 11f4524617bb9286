/// SHA-256 (FIPS 180-4), for content hashes of model files: Foundation on Linux has no digest,
/// and no Swift package can be fetched where the engine is built.
struct SHA256 {
    private var state: [UInt32] = [
        0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
    ]
    private var pending: [UInt8] = []
    private var byteCount: UInt64 = 0

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Adds bytes to the hash.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        byteCount &+= UInt64(bytes.count)
        var start = 0
        if !pending.isEmpty {
            let needed = Swift.min(64 - pending.count, bytes.count)
            pending += bytes[0..<needed]
            start = needed
            if pending.count == 64 {
                let block = pending
                block.withUnsafeBytes { compress(UnsafeRawBufferPointer(rebasing: $0[0..<64])) }
                pending.removeAll(keepingCapacity: true)
            }
        }
        while start + 64 <= bytes.count {
            compress(UnsafeRawBufferPointer(rebasing: bytes[start..<start + 64]))
            start += 64
        }
        if start < bytes.count { pending += bytes[start...] }
    }

    /// The digest as 64 lowercase hexadecimal digits.
    mutating func hexDigest() -> String {
        let bitCount = byteCount &* 8
        var tail: [UInt8] = [0x80]
        while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitCount >> UInt64(shift)))
        }
        let savedCount = byteCount
        tail.withUnsafeBytes { update($0) }
        byteCount = savedCount
        return state.map { word in
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }

    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { words in
            for index in 0..<16 {
                words[index] = (0..<4).reduce(UInt32(0)) { ($0 << 8) | UInt32(block[index * 4 + $1]) }
            }
            for index in 16..<64 {
                let low = words[index - 15]
                let high = words[index - 2]
                let sigma0 = low.rotatedRight(7) ^ low.rotatedRight(18) ^ (low >> 3)
                let sigma1 = high.rotatedRight(17) ^ high.rotatedRight(19) ^ (high >> 10)
                words[index] = words[index - 16] &+ sigma0 &+ words[index - 7] &+ sigma1
            }
            var (a, b, c, d) = (state[0], state[1], state[2], state[3])
            var (e, f, g, h) = (state[4], state[5], state[6], state[7])
            for index in 0..<64 {
                let sum1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                let choice = (e & f) ^ (~e & g)
                let first = h &+ sum1 &+ choice &+ SHA256.roundConstants[index] &+ words[index]
                let sum0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                (h, g, f, e) = (g, f, e, d &+ first)
                (d, c, b, a) = (c, b, a, first &+ sum0 &+ majority)
            }
            for (index, value) in [a, b, c, d, e, f, g, h].enumerated() { state[index] &+= value }
        }
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}
