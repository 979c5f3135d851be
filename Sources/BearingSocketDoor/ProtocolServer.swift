import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingConfig
import BearingLog
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Joins the transport (bytes) to the hub (publishing): one `ClientSession` per connection turns bytes
/// into requests on the transport thread; every request is then handled on the pipeline queue, in order
/// with everything published, so a WATCH reply and its replayed state are never overtaken by data.
/// Requests that reach outside the hub — CALIBRATION reloads, PIPELINE definitions (checked against the
/// peer's uid) — are answered here, still on the pipeline queue.
final class ProtocolServer: SocketTransportDelegate, Sendable {
    let transport: SocketTransport
    private let queue: DispatchQueue
    private let hub: PipelineHub
    private let logger: Logger
    private let maxRequestBytes: Int
    /// Who may define or delete named pipelines at run time (uids; root always may).
    private let pipelineWriters: Set<UInt32>
    private let namedStore: NamedPipelineStore?
    private let requests: SocketDoor.Requests

    /// Each connection's session and peer; touched on the transport thread only (the lock is never contended).
    private let connections = Mutex<[ClientID: (session: ClientSession, peer: Peer)]>([:])

    init(transport: SocketTransport, queue: DispatchQueue, hub: PipelineHub, logger: Logger,
         maxRequestBytes: Int, pipelineWriters: Set<UInt32>, namedStore: NamedPipelineStore?, requests: SocketDoor.Requests) {
        self.requests = requests
        self.transport = transport
        self.queue = queue
        self.hub = hub
        self.logger = logger
        self.maxRequestBytes = maxRequestBytes
        self.pipelineWriters = pipelineWriters
        self.namedStore = namedStore
    }

    func transport(_ t: SocketTransport, didAccept client: ClientID, peer: Peer) {
        connections.withLock { $0[client] = (ClientSession(maxRequestBytes: maxRequestBytes), peer) }
        logger.debug("client connected", metadata: ["client": "\(client)", "peer": "\(peer)"])
        queue.async { [hub] in hub.connect(client) }
    }

    func transport(_ t: SocketTransport, didReceive bytes: UnsafeRawBufferPointer, from client: ClientID) {
        let received = connections.withLock { c -> (events: [ClientSession.Event], peer: Peer)? in
            guard let peer = c[client]?.peer, let events = c[client]?.session.receive(bytes) else { return nil }
            return (events, peer)
        }
        guard let (events, peer) = received, !events.isEmpty else { return }
        queue.async { [self] in
            for event in events {
                switch event {
                case .reply(let line): hub.reply(client, line)
                case .request(let request): handle(request, from: client, peer: peer)
                }
            }
        }
    }

    func transport(_ t: SocketTransport, didClose client: ClientID) {
        connections.withLock { $0[client] = nil }
        logger.debug("client disconnected", metadata: ["client": "\(client)"])
        queue.async { [hub] in hub.disconnect(client) }
    }

    func transport(_ t: SocketTransport, note: String, warning: Bool) {
        if warning { logger.warning("\(note)") } else { logger.info("\(note)") }
    }

    /// On the pipeline queue.
    private func handle(_ request: ClientRequest, from client: ClientID, peer: Peer?) {
        switch request {
        case .calibration(let reload):
            guard let calibration = requests.calibration else {
                hub.reply(client, WireEncoding.error("CALIBRATION: no magnetometer is configured"))
                return
            }
            switch calibration(reload) {
            case .success(let line): hub.reply(client, line)
            case .failure(let refused):
                hub.reply(client, WireEncoding.error("CALIBRATION: reload rejected: \(refused.reasons.joined(separator: "; "))"))
            }
        case .definePipeline(let p):
            guard mayChange(p.name, client, peer) else { return }
            hub.define(p)
            persist(client)
            logger.notice("pipeline defined", metadata: ["name": "\(p.name)", "by": "\(peer.map { "\($0)" } ?? "?")",
                                                         "chains": "\(WireEncoding.chains(p.chains))"])
            hub.reply(client, hub.pipelinesObject())
        case .deletePipeline(let name):
            guard mayChange(name, client, peer) else { return }
            guard hub.remove(named: name) else {
                hub.reply(client, WireEncoding.error("PIPELINE: no pipeline named \"\(name)\""))
                return
            }
            persist(client)
            logger.notice("pipeline deleted", metadata: ["name": "\(name)"])
            hub.reply(client, hub.pipelinesObject())
        case .blackBox:
            // The ring may hold positions: readers of the UNIX socket only (its mode and group decide who).
            guard peer?.uid != nil else {
                hub.reply(client, WireEncoding.error("BLACKBOX: over the UNIX socket only"))
                return
            }
            guard let blackBox = requests.blackBox else {
                hub.reply(client, WireEncoding.error("BLACKBOX: the black box is off (blackbox.enabled: false)"))
                return
            }
            let (format, file) = blackBox()
            hub.reply(client, JSONValue.map([("class", .string("BLACKBOX")), ("format", .number(Double(format))),
                                             ("bytes", .number(Double(file.count))), ("data", .string(Data(file).base64EncodedString()))]).json)
            logger.info("black box sent", metadata: ["bytes": "\(file.count)", "to": "\(peer.map { "\($0)" } ?? "?")"])
        default:
            hub.handle(request, from: client, now: .now())
        }
    }

    /// Whether this peer may define or delete the pipeline `name`: root or a listed writer over the UNIX
    /// socket, and never one the config file or the fleet defines. Otherwise the client is told why.
    private func mayChange(_ name: String, _ client: ClientID, _ peer: Peer?) -> Bool {
        guard let uid = peer?.uid, uid == 0 || pipelineWriters.contains(uid) else {
            let who = peer?.uid.map { "uid \($0)" } ?? "a TCP client"
            hub.reply(client, WireEncoding.error("PIPELINE: \(who) may not change pipelines; allowed: root and the uids in socket.pipeline_writers, over the UNIX socket"))
            return false
        }
        switch hub.named[name]?.origin {
        case .config?:
            hub.reply(client, WireEncoding.error("PIPELINE: \"\(name)\" is defined in the config file; change it there"))
            return false
        case .fleet?:
            hub.reply(client, WireEncoding.error("PIPELINE: \"\(name)\" is set by the fleet (mqtt.fleet_topic); change it there"))
            return false
        case .client?, nil:
            return true
        }
    }

    /// Writes the client-defined pipelines; a failed write is reported to the client and logged (the
    /// pipeline stays in force until the restart).
    private func persist(_ client: ClientID) {
        guard let namedStore else { return }
        do {
            try namedStore.save(hub.named.values.filter { $0.origin == .client })
        } catch {
            logger.error("cannot save pipelines: \(error)", metadata: ["file": "\(namedStore.path)"])
            hub.reply(client, WireEncoding.error("PIPELINE: in force, but not saved (\(error)); it will be gone after a restart"))
        }
    }
}

/// The named pipelines clients defined, kept across restarts in one JSON file written atomically.
public struct NamedPipelineStore: Sendable {
    public let path: String
    public static let format = "bearing-pipelines/1"

    public init(path: String) { self.path = path }

    /// `$STATE_DIRECTORY/pipelines.json` under systemd, else `/var/lib/bearing/pipelines.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty { return "\(dir)/pipelines.json" }
        return "/var/lib/bearing/pipelines.json"
    }

    public func save(_ pipelines: [NamedPipeline]) throws(SystemError) {
        var e: [(String, JSONValue)] = []
        for p in pipelines.sorted(by: { $0.name < $1.name }) {
            e.append((p.name, .map(p.chains.keys.sorted().map { ($0.rawValue, .list(p.chains[$0]!.map(\.value))) })))
        }
        let text = JSONValue.map([("format", .string(Self.format)), ("pipelines", .map(e))]).json + "\n"
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex { try AtomicFile.makeDirectories(String(path[..<slash])) }
        try AtomicFile.write(Array(text.utf8), to: path, mode: 0o640)
    }

    /// The stored pipelines; none when there is no file. A damaged file is an error naming it and why.
    public func load() throws(ConfigError) -> [NamedPipeline] {
        let bytes: [UInt8]
        do { bytes = try AtomicFile.read(path, limit: 1 << 20) } catch {
            if error.errno == ENOENT { return [] }
            throw ConfigError("\(path): \(error)")
        }
        do {
            let root = try JSONValue.parse(bytes: bytes)
            guard root["format"]?.string == Self.format, case .map(let entries)? = root["pipelines"] else {
                throw ConfigError("\(path): not a \(Self.format) file")
            }
            var out: [NamedPipeline] = []
            for (name, value) in entries {
                guard NamedPipeline.validName(name) else { throw ConfigError("\(path): pipelines.\(name): not a valid pipeline name") }
                out.append(NamedPipeline(name: name, chains: try NamedPipeline.chains(value, path: "\(path): pipelines.\(name)"), origin: .client))
            }
            return out
        } catch let e as ConfigError {
            throw e
        } catch let e as JSONParseError {
            throw ConfigError("\(path): not valid JSON: \(e)")
        } catch let e as OperatorSpecError {
            throw ConfigError(e.message)
        } catch {
            throw ConfigError("\(path): \(error)")
        }
    }
}
