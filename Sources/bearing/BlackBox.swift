import ArgumentParser
import BearingClient
import BearingDaemon
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bearing blackbox save [FILE]`: the daemon's black-box ring, over the UNIX socket.
struct BlackBoxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blackbox",
        abstract: "The daemon's black box: the last minutes of what the sensors and gpsd said (docs/blackbox.md).",
        discussion: """
            `bearing blackbox save [FILE]` saves the running daemon's ring to FILE (default: \
            blackbox-<UTC time>.bbx here, mode 0600). It asks over the UNIX socket, so whoever may read the \
            socket may save it; `bearing replay FILE` replays it. SIGUSR1 to the daemon saves it into \
            blackbox.directory instead.
            """)

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case save
    }

    @Argument(help: "What to do: save.") var action: Action
    @Argument(help: "Where to write the recording.") var file: String?
    @OptionGroup var socketOptions: SocketOptions

    func run() throws {
        switch action {
        case .save:
            let bytes: [UInt8]
            do { bytes = try BlackBoxFetch.ring(socketPath: socketOptions.socket) } catch {
                throw ExitStatus.failure("bearing blackbox save: \(error)")
            }
            let path = file ?? "blackbox-\(BlackBoxRecorder.stamp()).bbx"
            do { try AtomicFile.write(bytes, to: path, mode: 0o600) } catch {
                throw ExitStatus.failure("bearing blackbox save: \(error)")
            }
            print("saved \(bytes.count) bytes to \(path)")
        }
    }
}
