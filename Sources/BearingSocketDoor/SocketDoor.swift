import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingConfig
import BearingLog
import BearingService
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The socket door: the UNIX socket and the optional loopback TCP door, in gpsd's JSON dialect. Its readers
/// are the hub's clients (WATCH, POLL, their own chains): the door serves them from the `PublishingCore` it is
/// given (`serveClients`), as the other doors subscribe to it, and it is one service of the daemon's group.
/// Each connection's bytes become requests (`ProtocolServer`) answered on the pipeline queue; the requests that
/// reach outside the hub (a calibration reload, the black box) go to `Requests`, which the daemon fills in.
public final class SocketDoor: Door, Sendable {
    public struct Configuration: Sendable {
        public var socket: SocketSettings
        /// Where client-defined pipelines are kept; nil keeps them in memory only.
        public var pipelineStore: String?
        /// The listeners systemd passed for this door (socket activation), read by the daemon once for every
        /// door; nil: the door reads `$LISTEN_FDS` itself.
        public var inherited: [SocketActivation.Inherited]?

        public init(socket: SocketSettings, pipelineStore: String? = nil, inherited: [SocketActivation.Inherited]? = nil) {
            self.socket = socket
            self.pipelineStore = pipelineStore
            self.inherited = inherited
        }
    }

    /// What the door's readers may ask of the daemon beyond the hub; nil: not there (no magnetometer, the black
    /// box off), and the reader is told so.
    public struct Requests: Sendable {
        /// `?CALIBRATION;`: the CALIBRATION object in force, after a reload when `reload` (a reload that is
        /// refused gives its reasons, and what was in force stays).
        public var calibration: (@Sendable (_ reload: Bool) -> Result<String, CalibrationRefused>)?
        /// `?BLACKBOX;`: the ring as one recording file, and its format's version.
        public var blackBox: (@Sendable () -> (format: Int, bytes: [UInt8]))?
        /// `?CALIBRATION={"points":true};`: the CALIBRATION object with online calibration's points and history,
        /// the deviation curve in force and the observations from driving.
        public var calibrationPoints: (@Sendable () -> String)?
        /// `?CALIBRATION={"online":…};`: the action done, and the CALIBRATION object after it (or why not).
        public var onlineCalibration: (@Sendable (OnlineCalibrationAction) -> Result<String, CalibrationRefused>)?
        /// `?BLACKBOX={"save":true};`: the ring saved with this reason; the file written (or why not).
        public var saveBlackBox: (@Sendable (_ reason: String) -> Result<String, CalibrationRefused>)?
        /// `?HEALTH;`: the HEALTH object.
        public var health: (@Sendable () -> String)?
        /// `?SWING…;`: the SWING object after the action (or why it was refused).
        public var swing: (@Sendable (SwingAction) -> Result<String, CalibrationRefused>)?

        public init(calibration: (@Sendable (_ reload: Bool) -> Result<String, CalibrationRefused>)? = nil,
                    blackBox: (@Sendable () -> (format: Int, bytes: [UInt8]))? = nil) {
            self.calibration = calibration
            self.blackBox = blackBox
        }
    }

    /// A request refused (a calibration reload, an action): each reason.
    public struct CalibrationRefused: Error, Sendable {
        public var reasons: [String]
        public init(_ reasons: [String]) { self.reasons = reasons }
    }

    public let name = "socket"
    public let configuration: Configuration
    /// The hub and its serial context, which every door subscribes to.
    public let core: PublishingCore
    /// The one serial context for the pipelines; `hub` is touched only there.
    public var queue: DispatchQueue { core.queue }
    public var hub: PipelineHub { core.hub }
    private let logger: Logger
    private let requests: Requests
    private let box = TransportBox()
    /// The protocol server (kept alive: the transport holds its delegate weakly); whether `stop()` has run (a
    /// second call logs nothing again); the listeners `prepare()` opened, and who opened them, until `serve()`
    /// hands them to the running transport.
    private let lifecycle = Mutex<(protocolServer: ProtocolServer?, stopped: Bool,
                                   unserved: (listeners: [Listener], openedBy: String)?)>((nil, false, nil))

    /// A door on `core`; `start()` opens the listeners and serves the hub's clients from then on.
    public init(configuration: Configuration, core: PublishingCore, logger: Logger, requests: Requests = Requests()) {
        self.configuration = configuration
        self.core = core
        self.logger = logger
        self.requests = requests
    }

    /// Opens the listeners and starts serving (`start()`); throws (having opened nothing) when one cannot be opened.
    public static func open(_ configuration: Configuration, core: PublishingCore, logger: Logger, requests: Requests = Requests()) throws -> SocketDoor {
        let door = SocketDoor(configuration: configuration, core: core, logger: logger, requests: requests)
        try door.start()
        return door
    }

    /// Serves until the group's shutdown, then closes (`stop()`).
    public func run(until shutdown: ShutdownEvent) async throws {
        await shutdown.wait()
        stop()
    }

    public func close() { stop() }

    /// Opens the listeners and starts serving (`prepare()`, then `serve()`); throws (having opened nothing) when
    /// one cannot be opened.
    public func start() throws {
        try prepare()
        do { try serve() } catch { stop(); throw error }
    }

    /// Opens the listeners, makes the hub's clients this door's and loads the stored pipelines, but answers no
    /// one: a reader who connects waits in the listener's backlog until `serve()`. The daemon serves once every
    /// door is open, so that a first request already sees what the others put in force (the MQTT door's saved
    /// fleet pipelines). Throws (having opened nothing) when a listener cannot be opened.
    public func prepare() throws {
        // Listeners systemd passed (socket activation) are taken as they are; else Bearing opens its own.
        let inherited = try configuration.inherited ?? SocketActivation.inheritedListeners()
        let listeners = inherited.isEmpty ? try openListeners() : adopt(inherited)
        var tc = SocketTransport.Configuration()
        tc.maxClients = configuration.socket.maxClients
        tc.clientQueue = configuration.socket.clientQueue
        tc.writeInterval = configuration.socket.writeInterval
        tc.notices = .gpsdJSON
        let transport = SocketTransport(listeners: listeners, configuration: tc)
        let store = configuration.pipelineStore.map(NamedPipelineStore.init(path:))
        let server = ProtocolServer(transport: transport, queue: queue, hub: hub, logger: logger,
                                    maxRequestBytes: configuration.socket.maxRequestBytes,
                                    pipelineWriters: Self.uids(configuration.socket.pipelineWriters, logger: logger),
                                    namedStore: store, requests: requests)
        transport.delegate = server
        lifecycle.withLock {
            $0.protocolServer = server
            $0.unserved = (listeners, inherited.isEmpty ? "bearing" : "systemd")
        }
        box.transport = transport
        // The hub's clients are this transport's from now on (before it, none can have connected): straight to
        // it, no lock on the way.
        core.serveClients { line, clients in transport.send(line, to: clients) }
        if let store { loadStoredPipelines(store) }
    }

    /// Starts answering the readers on the listeners `prepare()` opened (those in the backlog first). Throws
    /// (having closed them) when the socket loop cannot start.
    public func serve() throws {
        guard let transport = box.transport,
              let (listeners, openedBy) = lifecycle.withLock({ s in defer { s.unserved = nil }; return s.unserved }) else {
            preconditionFailure("SocketDoor.serve() without prepare(), or twice")
        }
        do {
            try transport.start()
        } catch {
            Self.abandon(listeners)
            throw error
        }
        for l in listeners {
            logger.info("listening", metadata: ["on": "\(l.name)", "kind": "\(l.kind.rawValue)", "opened by": "\(openedBy)"])
        }
    }

    /// Closes listeners no transport runs, and removes the socket files Bearing made.
    private static func abandon(_ listeners: [Listener]) {
        for l in listeners {
            Glibc.close(l.fd)
            if let p = l.unlinkPath { unlink(p) }
        }
    }

    /// Writes what is queued, closes every client and listener, removes the socket file; logs what slow
    /// clients cost (lines dropped, clients evicted or refused), when they cost anything.
    public func stop() {
        queue.sync {}
        box.transport?.stop()
        queue.sync {}
        let (first, unserved) = lifecycle.withLock { s in
            defer { s.stopped = true; s.unserved = nil }
            return (!s.stopped, s.unserved)
        }
        if let unserved { Self.abandon(unserved.listeners) }
        guard first else { return }
        if let s = box.transport?.statistics, s.dropped + s.evicted + s.refused > 0 {
            logger.info("socket closed", metadata: ["dropped_for_slow_clients": "\(s.dropped)", "clients_evicted": "\(s.evicted)",
                                                    "clients_refused": "\(s.refused)"])
        }
    }

    /// HEALTH: readers now, and what slow readers have cost.
    public var health: [(String, HealthValue)] {
        let s = transportStatistics
        return [("clients", .number(Double(clientCount))), ("dropped", .number(Double(s?.dropped ?? 0))),
                ("evicted", .number(Double(s?.evicted ?? 0))), ("refused", .number(Double(s?.refused ?? 0)))]
    }

    public var socketPath: String { configuration.socket.path }
    public var clientCount: Int { box.transport?.clientCount ?? 0 }
    /// Writes, drops, evictions, refusals and loop turns so far; nil before `start()`.
    public var transportStatistics: SocketTransport.Statistics? { box.transport?.statistics }
    /// For the watchdog: the socket loop's turns (it turns at least once a second).
    public var liveness: Liveness.Evidence { .progress("socket loop", UInt64(transportStatistics?.turns ?? 0)) }

    /// One unfiltered value, from any thread, into the core; published before this returns.
    public func publish(_ report: Report, from source: StreamSource) {
        core.publish(report, from: source)
    }

    /// The UNIX socket (with its mode and group) and, when configured, the TCP door.
    private func openListeners() throws -> [Listener] {
        let s = configuration.socket
        try UnixSocket.ensureParentDirectory(of: s.path)
        let fd = try UnixSocket.listen(path: s.path, mode: mode_t(s.mode))
        var listeners = [Listener(fd: fd, kind: .unix, name: s.path, unlinkPath: s.path)]
        func abandon() { Self.abandon(listeners) }
        if let group = s.group {
            guard let g = getgrnam(group) else {
                abandon()
                throw ConfigError("socket.group: no group \"\(group)\" on this system (create it: groupadd --system \(group))")
            }
            if chown(s.path, uid_t.max, g.pointee.gr_gid) != 0 {
                let e = SystemError("chown", s.path)
                abandon()
                throw e
            }
        }
        if let tcp = s.tcp {
            if !TCPSocket.isLoopback(tcp.host) {
                logger.warning("the TCP door listens on \(tcp.host), not loopback: anyone who can reach it reads this board's position (socket.tcp_allow_remote is set)")
            }
            do {
                let tfd = try TCPSocket.listen(host: tcp.host, port: tcp.port)
                listeners.append(Listener(fd: tfd, kind: .tcp, name: TCPSocket.name(tcp.host, tcp.port), unlinkPath: nil))
            } catch {
                abandon()
                throw error
            }
        }
        return listeners
    }

    /// Listeners systemd opened: their files, modes and groups are the socket unit's, and systemd removes
    /// them, so none is unlinked here. Readers who connected before the service started are in the backlog.
    private func adopt(_ inherited: [SocketActivation.Inherited]) -> [Listener] {
        inherited.map { l in
            switch l.address {
            case .unix(let path):
                if path != configuration.socket.path {
                    logger.notice("socket activation: serving \(path) as systemd passed it; socket.path (\(configuration.socket.path)) is not used")
                }
                return Listener(fd: l.fd, kind: .unix, name: path, unlinkPath: nil)
            case .tcp(let host, let port):
                return Listener(fd: l.fd, kind: .tcp, name: TCPSocket.name(host, port), unlinkPath: nil)
            }
        }
    }

    private func loadStoredPipelines(_ store: NamedPipelineStore) {
        do {
            let stored = try store.load()
            queue.sync {
                for p in stored {
                    if hub.named[p.name]?.origin == .config {
                        logger.warning("stored pipeline \"\(p.name)\" is shadowed by the config's", metadata: ["file": "\(store.path)"])
                        continue
                    }
                    hub.define(p)
                }
            }
        } catch {
            logger.error("stored pipelines not loaded: \(error); clients can define them again", metadata: ["file": "\(store.path)"])
        }
    }

    /// Resolves `socket.pipeline_writers` (names or uids); unknown names are logged and skipped.
    static func uids(_ users: [String], logger: Logger) -> Set<UInt32> {
        var out = Set<UInt32>()
        for u in users {
            if let n = UInt32(u) { out.insert(n); continue }
            if let pw = getpwnam(u) { out.insert(pw.pointee.pw_uid) } else {
                logger.warning("socket.pipeline_writers: no user \"\(u)\"; skipped")
            }
        }
        return out
    }
}

/// The transport `start()` creates, for the counts and `stop()`.
private final class TransportBox: Sendable {
    private let value = Mutex<SocketTransport?>(nil)
    var transport: SocketTransport? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

extension SocketTransport.Notices {
    /// gpsd's `OVERFLOW` and `ERROR` objects, as the socket and the TCP door tell their readers.
    public static let gpsdJSON = SocketTransport.Notices(overflow: { WireEncoding.overflow(dropped: $0) },
                                                         refused: { WireEncoding.error($0) })
}
