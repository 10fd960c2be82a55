import ArgumentParser
import Embedded

/// The `canopy` command: a self-hosted realtime database gateway.
@main
struct Canopy: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A self-hosted realtime database gateway speaking the Firebase protocols.",
        version: CanopyVersion.description,
        subcommands: [Serve.self, ExportCommand.self, ImportCommand.self, RulesCommand.self, BenchCommand.self],
        defaultSubcommand: Serve.self)
}
