import ArgumentParser
import BearingDaemon
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The socket option shared by the client subcommands.
struct SocketOptions: ParsableArguments {
    @Option(name: .customLong("socket"), help: ArgumentHelp(
        "The agent's UNIX socket (default: $RUNTIME_DIRECTORY/bearing.sock or /run/bearing/bearing.sock); a relative path is taken from the current directory, as in the config.",
        valueName: "path"))
    var socketPath: String = AgentConfig.defaultSocketPath()

    @Option(help: ArgumentHelp("Read the agent's TCP door instead, HOST:PORT.", valueName: "host:port"))
    var tcp: String?

    /// The socket path, absolute.
    var socket: String { Self.absolute(socketPath) }

    /// `path` made absolute against the current directory (what the config does with `./…` paths).
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path).standardized.path
    }
}
