import ArgumentParser
import BearingAgent

/// The socket option shared by the client subcommands.
struct SocketOptions: ParsableArguments {
    @Option(help: "The agent's UNIX socket (default: $RUNTIME_DIRECTORY/bearing.sock or /run/bearing/bearing.sock).")
    var socket: String = AgentConfig.defaultSocketPath()
}
