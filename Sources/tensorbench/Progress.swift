import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress display on stderr, shown only when stderr is a terminal.
struct Progress {
    /// Whether stderr is a terminal (`isatty(2)`).
    let enabled = isatty(2) == 1
    /// The number of rows the run will take.
    let total: Int

    /// Shows `[  3/42] gemm-256 · openblas`, replacing the previous line.
    func show(_ done: Int, _ workload: String, _ backend: String) {
        guard enabled else { return }
        write("\r\u{1B}[K[\(String(repeating: " ", count: max(0, "\(total)".count - "\(done + 1)".count)))\(done + 1)/\(total)] \(workload) · \(backend)")
    }

    /// Clears the line.
    func finish() {
        guard enabled else { return }
        write("\r\u{1B}[K")
    }

    /// Prints a line on stderr, clearing the progress line first when one is shown.
    static func note(_ line: String) {
        FileHandle.standardError.write(Data(((isatty(2) == 1 ? "\r\u{1B}[K" : "") + line + "\n").utf8))
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
