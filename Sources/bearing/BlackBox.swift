import ArgumentParser
import BearingClient
import BearingDaemon
import BearingPOSIX
import BearingRecording
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bearing blackbox save [FILE]`: the daemon's black-box ring, over the UNIX socket.
struct BlackBoxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "blackbox",
        abstract: "The daemon's black box: the last minutes of what the sensors and gpsd said (docs/blackbox.md).",
        subcommands: [Save.self])

    struct Save: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save the daemon's black-box ring to FILE (default: blackbox-<UTC time>.bbx here).",
            discussion: """
                Asks the running daemon over its UNIX socket (whoever may read the socket may save it); \
                `bearing replay FILE` replays it. SIGUSR1 to the daemon saves it into blackbox.directory instead.
                """)
        @OptionGroup var socketOptions: SocketOptions
        @Argument(help: "Where to write the recording.") var file: String?

        func run() throws {
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
