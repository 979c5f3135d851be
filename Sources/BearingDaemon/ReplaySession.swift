import BearingModel
import BearingPOSIX
import BearingRecording
import BearingLog
import Synchronization

/// `bearing replay`'s workflow: a whole daemon — pipeline, socket, data log, doors — fed by a recording, in a
/// private directory with the recorded calibrations written out, optionally waiting for its first reader.
public final class ReplaySession: Sendable {
    public struct Options: Sendable {
        /// Pace at this many times the recorded rate; nil: as fast as the CPU allows.
        public var speed: Double?
        /// Start once a reader has sent its WATCH (enable and json).
        public var waitForClient = false
        /// Keep serving after the recording ends, until `shutdown()` or a signal.
        public var stay = false
        /// A magnetometer calibration file to use instead of the recorded one.
        public var calibration: String?
        /// The socket and data log, instead of the config's.
        public var socket: String?
        public var dataLog: String?
        public init() {}
    }

    /// What stopped a session from starting; `isConfig` when the recorded config is at fault.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
        public var isConfig: Bool
    }

    public let daemon: Daemon
    /// The config the replay runs with (its socket, stores and calibrations in `scratch`).
    public let config: AgentConfig
    /// The private directory for the replay's socket, stores and calibrations, removed by `run`.
    public let scratch: String
    private let recording: Recording
    private let options: Options
    private let calibrationPaths: [String: String]
    private let logger: Logger
    private let started = Atomic(false)

    /// `config`: replay with this config as it is (its doors included); nil: the recorded one, with its doors
    /// off and its socket, data log and stores moved into a private directory.
    public init(recording: Recording, config given: AgentConfig?, options: Options, logger: Logger) throws(StartError) {
        let scratch: String
        do { scratch = try Directory.makeTemporary(prefix: "/tmp/bearing-replay-") } catch {
            throw StartError(description: "cannot make a directory for the replay: \(error)", isConfig: false)
        }
        let made: (AgentConfig, [String: String], Daemon)
        do { made = try Self.prepare(recording, given: given, options: options, scratch: scratch, logger: logger) } catch {
            Directory.removeFlat(scratch)
            throw error
        }
        (config, calibrationPaths, daemon) = made
        self.scratch = scratch
        self.recording = recording
        self.options = options
        self.logger = logger
    }

    private static func prepare(_ recording: Recording, given: AgentConfig?, options: Options, scratch: String,
                                logger: Logger) throws(StartError) -> (AgentConfig, [String: String], Daemon) {
        var c = try config(recording, given: given, options: options, scratch: scratch)
        let paths = try materializeCalibrations(recording, config: &c, scratch: scratch, replacing: options.calibration)
        do {
            return (c, paths, try Daemon(config: c, logger: logger, feed: .replay(startTime: recording.startTime ?? .now())))
        } catch {
            throw StartError(description: "cannot start the replay: \(error)", isConfig: false)
        }
    }

    /// The replay's config: `given`, or the recorded one with the doors off; no black box of its own.
    static func config(_ recording: Recording, given: AgentConfig?, options: Options, scratch: String) throws(StartError) -> AgentConfig {
        var c: AgentConfig
        if let given {
            c = given
        } else {
            do { c = try ConfigOrigin(recorded: recording.environment, yaml: recording.configText).resolve() } catch {
                throw StartError(description: "the recorded config: \(error.message)", isConfig: true)
            }
            c.keepToThisProcess(in: scratch)
        }
        if let socket = options.socket { c.socket.path = socket }
        if let dataLog = options.dataLog { c.log.dataLog = dataLog }
        c.blackbox.enabled = false
        c.pipelineStore = "\(scratch)/pipelines.json"
        return c
    }

    /// Writes the recorded calibration files (or `replacing`, for the magnetometer's) into `scratch` and
    /// points the config at them; returns where each is, for changes the recording holds.
    static func materializeCalibrations(_ recording: Recording, config c: inout AgentConfig, scratch: String,
                                        replacing: String?) throws(StartError) -> [String: String] {
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
            throw StartError(description: "cannot write the calibrations for the replay: \(error)", isConfig: false)
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

    /// Serves the replay until it ends (or, with `stay`, until `shutdown()` or a signal); `report` gets
    /// each line for the user (waiting, the summary, a failure). Returns the summary, or nil when the replay
    /// stopped early. Removes `scratch` at the end.
    public func run(report: @escaping @Sendable (String) -> Void) async throws -> ReplaySummary? {
        defer { Directory.removeFlat(scratch) }
        let agent = daemon.agent, daemon = self.daemon, recording = self.recording, logger = self.logger
        let (options, calibrationPaths) = (self.options, self.calibrationPaths)
        if options.waitForClient {
            // Set on the pipeline queue, where the hub lives; the first WATCH that enables JSON opens the gate.
            agent.core.entry.run {
                agent.core.hub.watchObserver = { _, o in if o.enable && o.json { self.started.store(true, ordering: .releasing) } }
            }
        }
        let outcome = Mutex<ReplaySummary?>(nil)
        let thread = WorkerThread(name: "bearing.replay")
        thread.start {
            if options.waitForClient {
                report("bearing replay: waiting for a reader on \(agent.config.socket.path)\n")
                while !self.started.load(ordering: .acquiring) { if !thread.pause(0.02) { return } }
            }
            let replayer = Replayer(agent: agent, recording: recording, logger: logger, calibrationPaths: calibrationPaths)
            let t0 = Syscall.monotonicSeconds()
            do {
                let s = try replayer.run(speed: options.speed) { thread.isStopping }
                let took = Syscall.monotonicSeconds() - t0
                report(String(printf: "bearing replay: %d records (%d sensor samples, %d gpsd messages), %.1f s recorded, replayed in %.2f s (%.0f× real time)\n",
                              s.events, s.samples, s.gpsdMessages, s.seconds, took, s.seconds / max(took, 1e-6)))
                outcome.withLock { $0 = s }
            } catch {
                report("bearing replay: \(error)\n")
            }
            if !options.stay { daemon.shutdown() }
        }
        try await daemon.run()
        thread.stop()
        return outcome.withLock { $0 }
    }

    /// Ends the session as SIGTERM does.
    public func shutdown() { daemon.shutdown() }
}
