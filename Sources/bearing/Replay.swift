import ArgumentParser
import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingRecording
import BearingLog
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bearing replay FILE`: the whole daemon — pipeline, socket, data log, doors — fed by a recording.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Run the whole daemon from a black-box recording instead of the sensors and gpsd.",
        discussion: """
            With the recorded config (the default) the socket's lines are the ones a reader got live, byte for \
            byte; the NMEA 0183, Signal K and MQTT doors and the TCP door stay off, so a replay never reaches \
            the boat or the fleet. With --config (and --board), that config is used as it is (its doors \
            included): what new chains or doors would have given. The calibrations in force are the recorded ones, unless \
            --calibration gives another. Exit status: 0 replayed; 1 the replay stopped (a driver asked for \
            what the recording does not hold); 65 (EX_DATAERR) the file is not a recording, is from a newer \
            version, or is corrupt in the middle (the message names the byte offset).
            """)

    @Argument(help: "The recording (bearing blackbox save, SIGUSR1, continuous segments, bearing record).") var file: String
    /// `--config`, `--board`, `--module`: replay with this config instead of the recorded one (its doors, socket
    /// and data log included), made as `bearing run` makes it.
    @OptionGroup var boardOptions: BoardOptions
    @Option(help: "A magnetometer calibration file to use instead of the recorded one.") var calibration: String?
    @Option(help: "Pace the replay at N times the recorded rate (1 = as recorded).") var speed: Double?
    @Flag(help: "Replay as fast as the CPU allows, on the recording's clock (the default unless --speed).") var fast = false
    @Option(help: "UNIX socket for the replay's readers (overrides the config's).") var socket: String?
    @Option(help: "NDJSON data log for the replay (overrides the config's).") var dataLog: String?
    @Flag(help: "Start once a reader has connected to the socket and sent its WATCH.") var waitForClient = false
    @Flag(help: "Keep serving after the recording ends, until SIGTERM or SIGINT.") var stay = false
    @Option(help: "Write the recording's IMU and magnetometer samples as the CSV `bearing attitude --samples` reads, and exit.")
    var exportSamples: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel: String = "notice"

    func validate() throws {
        if fast && speed != nil { throw ValidationError("--fast and --speed: choose one") }
        if let speed, !(speed > 0 && speed <= 10_000) { throw ValidationError("--speed \(speed): from above 0 to 10000") }
    }

    func run() async throws {
        let recording = try Self.load(file)
        if let tail = recording.damagedTail {
            Syscall.printToStandardError("bearing replay: \(file) ends in a damaged frame at byte offset \(tail.offset) "
                                         + "(\(tail.bytes) bytes, a power cut or kill -9 while writing): replaying up to the last good record\n")
        }
        let logger = Logger(label: "bearing", level: Logger.Level(rawValue: logLevel.lowercased()) ?? .notice)
        if let exportSamples {
            let rows = try SampleExport.write(recording, to: exportSamples)
            print("wrote \(rows) samples to \(exportSamples)")
            return
        }
        var options = ReplaySession.Options()
        options.speed = fast ? nil : speed
        (options.waitForClient, options.stay, options.calibration) = (waitForClient, stay, calibration)
        options.socket = socket.map(SocketOptions.absolute)
        options.dataLog = dataLog
        let given = boardOptions.config != nil || boardOptions.board != nil ? try boardOptions.resolve() : nil
        Syscall.ignoreSIGPIPE()
        let session: ReplaySession
        do {
            session = try ReplaySession(recording: recording, config: given, options: options, logger: logger)
        } catch {
            throw error.isConfig ? ExitStatus.configError(error.description) : ExitStatus.failure(error.description)
        }
        guard try await session.run(report: { Syscall.printToStandardError($0) }) != nil else { throw ExitCode(ExitStatus.failure) }
    }

    /// The recording, or exit 65 with the reader's message (it names the byte offset).
    static func load(_ file: String) throws -> Recording {
        let bytes: [UInt8]
        do { bytes = try AtomicFile.read(file, limit: 1 << 31) } catch {
            throw ExitStatus.failure("cannot read \(file): \(error)")
        }
        do { return try Recording(bytes: bytes) } catch {
            Syscall.printToStandardError("Error: \(file): \(error)\n")
            throw ExitCode(ExitStatus.dataError)
        }
    }
}
