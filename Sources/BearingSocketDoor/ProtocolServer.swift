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
    private let router: RequestRouter

    /// Each connection's session and peer; touched on the transport thread only (the lock is never contended).
    private let connections = Mutex<[ClientID: (session: ClientSession, peer: Peer)]>([:])

    init(transport: SocketTransport, queue: DispatchQueue, hub: PipelineHub, logger: Logger,
         maxRequestBytes: Int, pipelineWriters: Set<UInt32>, namedStore: NamedPipelineStore?, requests: SocketDoor.Requests) {
        self.transport = transport
        self.queue = queue
        self.hub = hub
        self.logger = logger
        self.maxRequestBytes = maxRequestBytes
        router = RequestRouter(hub: hub, logger: logger, writers: pipelineWriters, namedStore: namedStore, requests: requests)
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
    private func handle(_ request: ClientRequest, from client: ClientID, peer: Peer) {
        router.handle(request, from: client, caller: .socket(peer))
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
