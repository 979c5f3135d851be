import BearingI2C
import BearingModel
import BearingWire
import BearingLog
import BearingPOSIX
import BearingService
import BearingSimulator
import BearingSocketDoor
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The whole daemon, config in, running daemon out: the agent (sources, pipelines, the socket and TCP
/// doors, the data log), the doors the config turns on, SIGHUP and systemd's notification protocol, run as
/// one service group until SIGTERM or SIGINT (or `shutdown()`, even one called before `run()`). `bearing run` is this plus its command line;
/// tests run it in-process on the simulated bus.
public final class Daemon: Sendable {
    public let agent: Agent
    /// The socket and TCP door, whose readers are the hub's clients.
    public let socket: SocketDoor
    /// Every door the config turns on, the socket door last (the first stopped after the sources).
    public let doors: [any Door]
    private let notifier: SystemdNotification
    private let group: ServiceGroup

    /// Starts the agent and opens the doors; throws (having stopped what it started) when one cannot start.
    /// `signals` end the run (none in tests, which call `shutdown()`).
    /// `origin` says how `config` was made, for the black box; `feed` says whether the sources are live or
    /// a recording's (`Replayer`).
    public init(config: AgentConfig, logger: Logger, signals: [Int32] = [SIGTERM, SIGINT],
                openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus = BusOpener.open,
                wallClock: @escaping @Sendable () -> GPSTimestamp = GPSTimestamp.now,
                origin: ConfigOrigin? = nil, feed: Agent.Feed = .live) throws {
        let notifier = SystemdNotification(logger: logger)
        let agent = Agent(config: config, logger: logger, openBus: openBus, wallClock: wallClock, feed: feed)
        agent.origin = origin
        try agent.startPublishing()
        // HEALTH names every door: they are known once open, before any reader can ask.
        let opened = Mutex<[any Door]>([])
        var requests = agent.socketRequests
        requests.health = { [agent] in WireEncoding.health(agent.healthSources(), doors: opened.withLock { $0 }) }
        do {
            (socket, doors) = try Doors.open(config, core: agent.core, requests: requests, logger: logger)
        } catch {
            agent.stop()
            throw error
        }
        opened.withLock { [doors] in $0 = doors }
        // The doors subscribe before the first value: they see what the socket's readers see from the start.
        agent.startSources()
        // One service per part and per door; a service group shuts services down in reverse order, each after
        // the one before it has returned: the sources, then the socket door, then the other doors, then the data log.
        // Made here, so that a `shutdown()` before `run()` is kept.
        func part(_ p: Agent.Part) -> (name: String, service: any Service) { (p.rawValue, AgentPartService(agent: agent, part: p)) }
        group = ServiceGroup(
            services: [part(.dataLog)] + doors.map { (name: $0.name, service: $0 as any Service) } + [part(.sources)]
                // Last in the list, so the first to hear of a shutdown: it sends STOPPING=1.
                + [(name: "systemd notification", service: NotifyService(notifier: notifier, agent: agent, socket: socket))],
            signals: signals, logger: logger)
        self.agent = agent
        self.notifier = notifier
    }

    /// Serves until a signal in `signals` or `shutdown()`, then stops every service, last started first.
    public func run() async throws {
        let notifier = self.notifier, agent = self.agent, socket = self.socket
        // SIGHUP reopens the data log (logrotate's postrotate sends it) and reloads the calibration file.
        let hup = await ServiceGroup.signalSource(SIGHUP) {
            notifier.tell { try $0.reloading(status: "reloading: data log reopened, calibration file read again") }
            agent.reopenLogs()
            agent.reloadCalibration(reason: "SIGHUP")
            notifier.ready(agent.statusLine(readers: socket.clientCount))
        }
        defer { hup.cancel() }
        // SIGUSR1 saves the black box's ring into its directory.
        let usr1 = await ServiceGroup.signalSource(SIGUSR1) {
            guard let recorder = agent.recorder else { return }
            do { try recorder.save(reason: "SIGUSR1") } catch { notifier.log.error("black box: could not save: \(error)") }
        }
        defer { usr1.cancel() }
        try await group.run()
    }

    /// One line for `systemctl status`: each source's state and how many readers the socket door has.
    public var statusLine: String { agent.statusLine(readers: socket.clientCount) }

    /// Begins a graceful shutdown, as SIGTERM does; `run()` returns when every service has stopped.
    public func shutdown() {
        group.shutdown()
    }
}

/// Bearing's side of systemd's notification protocol: READY, STATUS (only when it changed), RELOADING and
/// STOPPING through a `ServiceNotifier`, when systemd gave one; a failed notification is logged once.
final class SystemdNotification: Sendable {
    private let notifier: ServiceNotifier?
    let log: Logger
    /// WATCHDOG_USEC in seconds, when systemd watches this process.
    var watchdogInterval: Double? { notifier?.watchdogInterval }
    /// The last STATUS sent, and whether a notification has failed (logged once).
    private let sent = Mutex((lastStatus: "", failed: false))

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
            let first = sent.withLock { s -> Bool in
                defer { s.failed = true }
                return !s.failed
            }
            if first { log.warning("systemd notification failed: \(error)") }
        }
    }

    /// READY=1 with `status`, which later updates then compare against.
    func ready(_ status: String) {
        sent.withLock { $0.lastStatus = status }
        tell { try $0.ready(status: status) }
    }

    /// STATUS=, only when it differs from the last one sent.
    func updateStatus(_ status: String) {
        let changed = sent.withLock { s -> Bool in
            defer { s.lastStatus = status }
            return status != s.lastStatus
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
    let socket: SocketDoor

    func run(until shutdown: ShutdownEvent) async throws {
        notifier.ready(agent.statusLine(readers: socket.clientCount))
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
                    let stuck = liveness.stuck(agent.liveness + [socket.liveness], now: Syscall.monotonicSeconds())
                    if stuck.isEmpty {
                        notifier.tell { try $0.watchdog() }
                    } else if stuck != reported {
                        notifier.log.critical("watchdog not fed, systemd will restart the service: \(stuck.joined(separator: "; "))")
                        agent.recorder?.saveOnFault("watchdog")
                    }
                    reported = stuck
                }
                try await Task.sleep(for: .seconds(tick))
                sinceStatus += tick
                if sinceStatus >= 2 {
                    sinceStatus = 0
                    notifier.updateStatus(agent.statusLine(readers: socket.clientCount))
                }
            }
        }
        notifier.tell { try $0.stopping(status: "stopping: sources, then the socket door, then the other doors and the data log") }
    }
}

extension WireEncoding {
    /// `HEALTH`: each source's state, measured rate and failures; each door (its name, then what it says of
    /// itself: readers, backlog); the black box's ring.
    static func health(_ sources: (sources: JSONValue, blackBox: JSONValue?), doors: [any Door]) -> String {
        var members: [(String, JSONValue)] = [("class", .string("HEALTH")), ("sources", sources.sources)]
        members.append(("doors", .list(doors.map { door in
            .map([("name", .string(door.name))] + door.health.map { key, value in
                switch value {
                case .number(let n): return (key, .number(n))
                case .string(let t): return (key, .string(t))
                case .bool(let b): return (key, .bool(b))
                }
            })
        })))
        if let b = sources.blackBox { members.append(("blackbox", b)) }
        return JSONValue.map(members).json
    }
}
