import ArgumentParser
import BearingDaemon
import BearingClient
import BearingTerminal
import BearingSimulator
import BearingSensors
import BearingCalibration
import BearingAttitude
import BearingModel
import BearingWire
import BearingPOSIX
import BearingI2C
import BearingMQTT
import BearingConfig
import BearingService
import BearingLog
import BearingGPSD
import BearingPublishing
import BearingMarine
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the agent: read gpsd, publish on the UNIX socket and to the log.",
        discussion: """
            Exit status: 0 stopped by SIGTERM or SIGINT; 1 could not start (a socket, bus or port it needs; \
            the log's critical line names it); 64 a wrong command line; 78 (EX_CONFIG) the config file or board \
            profile cannot be read or is invalid (one line names the file, key and value; the systemd unit does \
            not restart the service for it).
            """)

    @OptionGroup var boardOptions: BoardOptions
    @Option(help: "gpsd to read, HOST:PORT (overrides gpsd.host/gpsd.port).") var gpsd: String?
    @Option(help: "UNIX socket path (overrides socket.path).") var socket: String?
    @Option(help: ArgumentHelp("Loopback TCP door for unmodified gpsd clients, HOST:PORT, e.g. 127.0.0.1:2948 (overrides socket.tcp).",
                               valueName: "host:port")) var tcp: String?
    @Option(help: "NDJSON data log file (overrides log.data_log).") var dataLog: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical (overrides log.level).") var logLevel: String?
    @Flag(help: "Publish everything gpsd sends: no filter, no de-duplication, no throttle.") var passthrough = false

    /// The file config with the command-line overrides applied.
    func resolvedConfig() throws -> AgentConfig {
        var c = try boardOptions.resolve()
        if let gpsd {
            guard let (host, port) = HostPort.parse(gpsd) else {
                throw ValidationError("--gpsd \(gpsd): expected HOST:PORT, e.g. 127.0.0.1:2947 or [::1]:2947")
            }
            c.gpsd.host = host
            c.gpsd.port = port
        }
        if let socket { c.socket.path = SocketOptions.absolute(socket) }
        if let tcp {
            guard let hp = HostPort.parse(tcp) else {
                throw ValidationError("--tcp \(tcp): expected HOST:PORT with a numeric address, e.g. 127.0.0.1:2948 or [::1]:2948")
            }
            guard c.socket.tcpAllowRemote || TCPSocket.isLoopback(hp.host) else {
                throw ValidationError("--tcp \(tcp): not a loopback address; the TCP door has no authentication, so set socket.tcp_allow_remote: true in the config to allow it")
            }
            c.socket.tcp = hp
        }
        if let dataLog { c.log.dataLog = dataLog }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("--log-level \(logLevel): allowed: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            c.log.level = level
        }
        if passthrough { c.makePassthrough() }
        return c
    }

    func run() async throws {
        let config = try resolvedConfig()
        let level = config.log.level
        let logger = Logger(label: "bearing", level: level)
        Syscall.ignoreSIGPIPE()

        let notifier = SystemdNotification(logger: logger)
        let agent = Agent(config: config, logger: logger, openBus: BusOpener.open)
        let doors: [any Door]
        do {
            try agent.start()
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(ExitStatus.failure)
        }
        do {
            doors = try Doors.open(config, server: agent.server, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            agent.stop()
            throw ExitCode(ExitStatus.failure)
        }
        // Start-up code (argument parsing, YAML, board profiles) is done: let its pages go.
        // BEARING_KEEP_STARTUP_PAGES=1 keeps them, for bench/footprint to measure what the process needs
        // without the page-out.
        if ProcessInfo.processInfo.environment["BEARING_KEEP_STARTUP_PAGES"] != "1" {
            if let bytes = Syscall.trimExecutableMappings() {
                logger.debug("executable mappings set to random access", metadata: ["bytes": "\(bytes)"])
            }
            // Once more when the first values have flowed: MADV_PAGEOUT leaves pages it cannot take at that
            // moment (being read in, locked, mapped by a reader started alongside); the second pass takes the
            // start-up pages the first left (bench/rss: 1.1–1.4 MB less).
            DispatchQueue.global().asyncAfter(deadline: .now() + 10) { Syscall.trimExecutableMappings() }
        }


        // SIGHUP reopens the data log (logrotate's postrotate sends it) and reloads the calibration file.
        let hup = await ServiceGroup.signalSource(SIGHUP) {
            notifier.tell { try $0.reloading(status: "reloading: data log reopened, calibration file read again") }
            agent.reopenLogs()
            agent.reloadCalibration(reason: "SIGHUP")
            notifier.ready(agent.statusLine)
        }

        // One service per part and per door; a service group shuts services down in reverse order, each after
        // the one before it has returned: the sources, then the socket server, then the doors, then the data log.
        func part(_ p: Agent.Part) -> (name: String, service: any Service) { (p.rawValue, AgentPartService(agent: agent, part: p)) }
        let group = ServiceGroup(
            services: [part(.dataLog)] + doors.map { (name: $0.name, service: $0 as any Service) } + [part(.server), part(.sources)]
                // Last in the list, so the first to hear of a shutdown: it sends STOPPING=1.
                + [(name: "systemd notification", service: NotifyService(notifier: notifier, agent: agent))],
            logger: logger)
        try await group.run()
        hup.cancel()
    }
}

/// Bearing's side of systemd's notification protocol: READY, STATUS (only when it changed), RELOADING and
/// STOPPING through a `ServiceNotifier`, when systemd gave one; a failed notification is logged once.
final class SystemdNotification: @unchecked Sendable { // `lock` guards `lastStatus` and `failed`
    private let notifier: ServiceNotifier?
    let log: Logger
    /// WATCHDOG_USEC in seconds, when systemd watches this process.
    var watchdogInterval: Double? { notifier?.watchdogInterval }
    private let lock = ConditionLock()
    private var lastStatus = ""
    private var failed = false

    init(logger: Logger) {
        log = logger
        do {
            notifier = try ServiceNotifier.fromEnvironment()
        } catch {
            logger.warning("systemd notifications off: \(error)")
            notifier = nil
        }
    }

    func tell(_ message: (ServiceNotifier) throws -> Void) {
        guard let notifier else { return }
        do {
            try message(notifier)
        } catch {
            let first = lock.withLock { () -> Bool in
                defer { failed = true }
                return !failed
            }
            if first { log.warning("systemd notification failed: \(error)") }
        }
    }

    /// READY=1 with `status`, which later updates then compare against.
    func ready(_ status: String) {
        lock.withLock { lastStatus = status }
        tell { try $0.ready(status: status) }
    }

    /// STATUS=, only when it differs from the last one sent.
    func updateStatus(_ status: String) {
        let changed = lock.withLock { () -> Bool in
            defer { lastStatus = status }
            return status != lastStatus
        }
        if changed { tell { try $0.status(status) } }
    }
}

/// One part of the agent as a service: it runs until graceful shutdown (SIGTERM/SIGINT), then stops its part.
struct AgentPartService: Service {
    let agent: Agent
    let part: Agent.Part

    func run(until shutdown: ShutdownEvent) async throws {
        await shutdown.wait()
        agent.stop(part)
    }
}

/// systemd's view of the daemon (Type=notify): READY=1 once the group runs — the agent has started (config,
/// boards, calibration loaded, the socket listening) and SIGTERM is handled — then STATUS every 2 s when
/// it changed, and STOPPING=1 when a shutdown begins. Nothing when not under systemd.
struct NotifyService: Service {
    let notifier: SystemdNotification
    let agent: Agent

    func run(until shutdown: ShutdownEvent) async throws {
        notifier.ready(agent.statusLine)
        #if DEBUG || BEARING_FAULT_INJECTION
        // Fault injection for the watchdog tests: "pipeline" wedges the pipeline queue now, "pipeline-on-sigusr2"
        // when SIGUSR2 comes (so that the instance systemd restarts runs normally).
        var wedgeSignal: DispatchSourceSignal?
        switch ProcessInfo.processInfo.environment["BEARING_TEST_WEDGE"] {
        case "pipeline":
            agent.wedgePipelineForTesting()
        case "pipeline-on-sigusr2":
            signal(SIGUSR2, SIG_IGN)
            wedgeSignal = DispatchSource.makeSignalSource(signal: SIGUSR2, queue: .global())
            wedgeSignal?.setEventHandler { [agent] in
                notifier.log.warning("SIGUSR2: wedging the pipeline queue (fault injection)")
                agent.wedgePipelineForTesting()
            }
            wedgeSignal?.resume()
        default:
            break
        }
        defer { wedgeSignal?.cancel() }
        #endif
        // With WatchdogSec=, WATCHDOG=1 every 2 s (or half the interval, if shorter) — only while every part
        // shows progress.
        let watchdog = notifier.watchdogInterval
        let tick = min(2, (watchdog ?? 4) / 2)
        try? await shutdown.runUntil {
            var liveness = Liveness(limit: watchdog ?? 0)
            var reported: [String] = []
            var sinceStatus = 0.0
            while true {
                if watchdog != nil {
                    agent.probePipeline()
                    let stuck = liveness.stuck(agent.liveness, now: Syscall.monotonicSeconds())
                    if stuck.isEmpty {
                        notifier.tell { try $0.watchdog() }
                    } else if stuck != reported {
                        notifier.log.critical("watchdog not fed, systemd will restart the service: \(stuck.joined(separator: "; "))")
                    }
                    reported = stuck
                }
                try await Task.sleep(for: .seconds(tick))
                sinceStatus += tick
                if sinceStatus >= 2 {
                    sinceStatus = 0
                    notifier.updateStatus(agent.statusLine)
                }
            }
        }
        notifier.tell { try $0.stopping(status: "stopping: sources, then the socket server, then the data log") }
    }
}
