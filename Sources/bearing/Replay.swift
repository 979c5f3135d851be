import ArgumentParser
import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingRecording
import BearingLog
import Dispatch
import FoundationEssentials
import Synchronization
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
        let scratch = try Self.scratchDirectory()
        defer { Self.removeScratch(scratch) }
        var c = try resolvedConfig(recording, scratch: scratch)
        let calibrationPaths = try Self.materializeCalibrations(recording, config: &c, scratch: scratch, replacing: calibration)
        Syscall.ignoreSIGPIPE()
        let daemon: Daemon
        do {
            daemon = try Daemon(config: c, logger: logger, feed: .replay(startTime: recording.startTime ?? .now()))
        } catch {
            throw ExitStatus.failure("cannot start the replay: \(error)")
        }
        let agent = daemon.agent
        let pace = fast ? nil : speed
        let (wait, stay, socketPath) = (waitForClient, self.stay, c.socket.path)
        let outcome = ReplayOutcome()
        let thread = WorkerThread(name: "bearing.replay")
        thread.start {
            if wait {
                Syscall.printToStandardError("bearing replay: waiting for a reader on \(socketPath)\n")
                while !thread.isStopping && !agent.server.hub.hasWatchers("TPV") && !agent.server.hub.hasWatchers("ATT") {
                    if !thread.pause(0.02) { return }
                }
            }
            let replayer = Replayer(agent: agent, recording: recording, logger: logger, calibrationPaths: calibrationPaths)
            let started = Syscall.monotonicSeconds()
            do {
                let s = try replayer.run(speed: pace) { thread.isStopping }
                let took = Syscall.monotonicSeconds() - started
                Syscall.printToStandardError(String(printf: "bearing replay: %d records (%d sensor samples, %d gpsd messages), %.1f s recorded, replayed in %.2f s (%.0f× real time)\n",
                                                    s.events, s.samples, s.gpsdMessages, s.seconds, took, s.seconds / max(took, 1e-6)))
            } catch {
                Syscall.printToStandardError("bearing replay: \(error)\n")
                outcome.failed()
            }
            if !stay { daemon.shutdown() }
        }
        try await daemon.run()
        thread.stop()
        if outcome.hasFailed { throw ExitCode(ExitStatus.failure) }
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

    /// The replay's config: the recorded one with the doors off, or `--config`; the socket, data log and
    /// stores moved out of the live daemon's way; no black box of its own.
    func resolvedConfig(_ recording: Recording, scratch: String) throws -> AgentConfig {
        var c: AgentConfig
        if boardOptions.config != nil || boardOptions.board != nil {
            c = try boardOptions.resolve()
        } else {
            do { c = try ConfigOrigin(recorded: recording.environment, yaml: recording.configText).resolve() } catch {
                throw ExitStatus.configError("the recorded config: \(error.message)")
            }
            c.keepToThisProcess(in: scratch)
        }
        if let socket { c.socket.path = SocketOptions.absolute(socket) }
        if let dataLog { c.log.dataLog = dataLog }
        c.blackbox.enabled = false
        c.pipelineStore = "\(scratch)/pipelines.json"
        return c
    }

    /// Writes the recorded calibration files (or `replacing`, for the magnetometer's) into `scratch`
    /// and points the config at them; returns where each is, for changes the recording holds.
    static func materializeCalibrations(_ recording: Recording, config c: inout AgentConfig, scratch: String,
                                        replacing: String?) throws -> [String: String] {
        let paths = ["magnetometer": "\(scratch)/calibration.json", "accelerometer": "\(scratch)/accelerometer.json",
                     "level": "\(scratch)/level.json", "online": "\(scratch)/auto-calibration.json",
                     "deviation": "\(scratch)/deviation.json", "driving": "\(scratch)/driving-deviation.json"]
        let recorded = recording.calibrations
        do {
            for (name, path) in paths {
                if let content = recorded[name] { try AtomicFile.write(Array(content.utf8), to: path) }
            }
            if let replacing { try AtomicFile.write(try AtomicFile.read(replacing), to: paths["magnetometer"]!) }
        } catch {
            throw ExitStatus.failure("cannot write the calibrations for the replay: \(error)")
        }
        c.magnetometer.calibrationFile = paths["magnetometer"]
        c.imu.calibrationFile = paths["accelerometer"]
        c.imu.levelFile = paths["level"]
        c.calibration.autoFile = paths["online"]
        c.calibration.deviationFile = paths["deviation"]
        c.calibration.drivingFile = paths["driving"]
        // A calibration given on the command line stays in force; the recording's changes apply otherwise.
        return replacing == nil ? paths : paths.filter { $0.key != "magnetometer" }
    }

    /// Removes the private directory and what the run left in it (its files only: it has no directories).
    static func removeScratch(_ dir: String) {
        guard let d = opendir(dir) else { return }
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { unlink("\(dir)/\(name)") }
        }
        closedir(d)
        rmdir(dir)
    }

    /// A private directory for the replay's socket, stores and calibrations.
    static func scratchDirectory() throws -> String {
        var template = Array("/tmp/bearing-replay-XXXXXX".utf8CString)
        // The name is read while the buffer mkdtemp filled in is still in scope.
        let made = template.withUnsafeMutableBufferPointer { b -> String? in mkdtemp(b.baseAddress!).map { String(cString: $0) } }
        guard let made else {
            throw ExitStatus.failure("cannot make a directory for the replay: \(SystemError("mkdtemp"))")
        }
        return made
    }
}

/// Whether the replay thread failed; read after it has stopped.
final class ReplayOutcome: Sendable {
    private let flag = Atomic(false)
    func failed() { flag.store(true, ordering: .releasing) }
    var hasFailed: Bool { flag.load(ordering: .acquiring) }
}
