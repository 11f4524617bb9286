import Foundation
import PackagePlugin

/// Embeds every `kernels/*.cl` of the package into the target as one generated Swift source.
///
/// The kernel directory is listed each time the build is planned, so a new `.cl` file is picked up
/// without editing `Package.swift`; the command reruns when any listed file changes.
@main
struct EmbedKernels: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let kernels = context.package.directoryURL.appending(path: "kernels")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: kernels.path)) ?? []
        let inputs = names.filter { $0.hasSuffix(".cl") }.sorted().map { kernels.appending(path: $0) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedKernels.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) OpenCL kernel files",
                executable: try context.tool(named: "embed-kernels").url,
                arguments: [output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
