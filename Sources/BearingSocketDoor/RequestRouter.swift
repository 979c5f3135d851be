import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingLog
import FoundationEssentials

/// Who sent a request, for the requests that not everyone may make.
public enum Caller: Sendable, CustomStringConvertible {
    /// A reader of the UNIX socket (with its uid) or of the TCP door.
    case socket(Peer)
    /// A page of the web door: the browser's address, and whether it has given the credential.
    case web(address: String, authenticated: Bool)

    public var description: String {
        switch self {
        case .socket(let peer): return "\(peer)"
        case .web(let address, let authenticated): return "web \(address)\(authenticated ? " (logged in)" : "")"
        }
    }
}

/// Answers every request a door's reader makes, on the pipeline queue, in order with everything published: the
/// hub's own (WATCH, POLL, …) and those that reach outside it (a calibration reload or its points, an action on
/// online calibration, pipeline definitions, the black box, health), which go to `SocketDoor.Requests`. One
/// router for every door whose readers are hub clients, so a page of the web door is answered exactly as a
/// socket reader is; only who may do what depends on the door (`Caller`).
public final class RequestRouter: Sendable {
    private let hub: PipelineHub
    private let logger: Logger
    /// Who may define or delete named pipelines, and act on online calibration or save the black box, over the
    /// UNIX socket (uids; root always may).
    private let writers: Set<UInt32>
    private let namedStore: NamedPipelineStore?
    private let requests: SocketDoor.Requests

    public init(hub: PipelineHub, logger: Logger, writers: Set<UInt32>, namedStore: NamedPipelineStore?, requests: SocketDoor.Requests) {
        self.hub = hub
        self.logger = logger
        self.writers = writers
        self.namedStore = namedStore
        self.requests = requests
    }

    /// On the pipeline queue.
    public func handle(_ request: ClientRequest, from client: ClientID, caller: Caller) {
        switch request {
        case .calibration(let reload):
            guard let calibration = requests.calibration else { return noMagnetometer(client) }
            switch calibration(reload) {
            case .success(let line): hub.reply(client, line)
            case .failure(let refused):
                hub.reply(client, WireEncoding.error("CALIBRATION: reload rejected: \(refused.reasons.joined(separator: "; "))"))
            }
        case .calibrationPoints:
            guard let points = requests.calibrationPoints else { return noMagnetometer(client) }
            hub.reply(client, points())
        case .onlineCalibration(let action):
            guard mayAct(client, caller, "CALIBRATION: online \(action.rawValue)") else { return }
            guard let online = requests.onlineCalibration else { return noMagnetometer(client) }
            switch online(action) {
            case .success(let line):
                logger.notice("online calibration: \(action.rawValue)", metadata: ["by": "\(caller)"])
                hub.reply(client, line)
            case .failure(let refused):
                hub.reply(client, WireEncoding.error("CALIBRATION: online \(action.rawValue) refused: \(refused.reasons.joined(separator: "; "))"))
            }
        case .definePipeline(let p):
            guard mayChange(p.name, client, caller) else { return }
            hub.define(p)
            persist(client)
            logger.notice("pipeline defined", metadata: ["name": "\(p.name)", "by": "\(caller)", "chains": "\(WireEncoding.chains(p.chains))"])
            hub.reply(client, hub.pipelinesObject())
        case .deletePipeline(let name):
            guard mayChange(name, client, caller) else { return }
            guard hub.remove(named: name) else {
                hub.reply(client, WireEncoding.error("PIPELINE: no pipeline named \"\(name)\""))
                return
            }
            persist(client)
            logger.notice("pipeline deleted", metadata: ["name": "\(name)"])
            hub.reply(client, hub.pipelinesObject())
        case .blackBox:
            // The ring may hold positions: readers of the UNIX socket (its mode and group decide who), and pages
            // that gave the credential.
            switch caller {
            case .socket(let peer) where peer.uid == nil:
                return hub.reply(client, WireEncoding.error("BLACKBOX: over the UNIX socket only"))
            case .web(_, authenticated: false):
                return hub.reply(client, WireEncoding.error("BLACKBOX: log in first"))
            default: break
            }
            guard let blackBox = requests.blackBox else { return blackBoxOff(client) }
            let (format, file) = blackBox()
            hub.reply(client, JSONValue.map([("class", .string("BLACKBOX")), ("format", .number(Double(format))),
                                             ("bytes", .number(Double(file.count))), ("data", .string(Data(file).base64EncodedString()))]).json)
            logger.info("black box sent", metadata: ["bytes": "\(file.count)", "to": "\(caller)"])
        case .saveBlackBox:
            guard mayAct(client, caller, "BLACKBOX: save") else { return }
            guard let save = requests.saveBlackBox else { return blackBoxOff(client) }
            switch save("request") {
            case .success(let file):
                logger.notice("black box saved", metadata: ["file": "\(file)", "by": "\(caller)"])
                hub.reply(client, JSONValue.map([("class", .string("BLACKBOX")), ("file", .string(file))]).json)
            case .failure(let error):
                hub.reply(client, WireEncoding.error("BLACKBOX: not saved: \(error.reasons.joined(separator: "; "))"))
            }
        case .swing(let action):
            if action != .status { guard mayAct(client, caller, "SWING: \(action.rawValue)") else { return } }
            guard let swing = requests.swing else {
                return hub.reply(client, WireEncoding.error("SWING: needs the fused compass (magnetometer and imu)"))
            }
            switch swing(action) {
            case .success(let line):
                if action != .status { logger.notice("swing: \(action.rawValue)", metadata: ["by": "\(caller)"]) }
                hub.reply(client, line)
            case .failure(let refused):
                hub.reply(client, WireEncoding.error("SWING: \(action.rawValue): \(refused.reasons.joined(separator: "; "))"))
            }
        case .health:
            guard let health = requests.health else { return hub.reply(client, WireEncoding.error("HEALTH: not available here")) }
            hub.reply(client, health())
        default:
            hub.handle(request, from: client, now: .now())
        }
    }

    private func noMagnetometer(_ client: ClientID) {
        hub.reply(client, WireEncoding.error("CALIBRATION: no magnetometer is configured"))
    }

    private func blackBoxOff(_ client: ClientID) {
        hub.reply(client, WireEncoding.error("BLACKBOX: the black box is off (blackbox.enabled: false)"))
    }

    /// Whether this caller may act on the daemon (online calibration, saving the black box): root or a listed
    /// writer over the UNIX socket, or a page that gave the web door's credential. Otherwise the client is told why.
    private func mayAct(_ client: ClientID, _ caller: Caller, _ what: String) -> Bool {
        switch caller {
        case .socket(let peer):
            if let uid = peer.uid, uid == 0 || writers.contains(uid) { return true }
            let who = peer.uid.map { "uid \($0)" } ?? "a TCP client"
            hub.reply(client, WireEncoding.error("\(what): \(who) may not; allowed: root and the uids in socket.pipeline_writers, over the UNIX socket, and the web door's pages that logged in"))
        case .web(_, let authenticated):
            if authenticated { return true }
            hub.reply(client, WireEncoding.error("\(what): log in first (the web door's credential)"))
        }
        logger.notice("refused: \(what)", metadata: ["by": "\(caller)"])
        return false
    }

    /// Whether this caller may define or delete the pipeline `name`: root or a listed writer over the UNIX
    /// socket, and never one the config file or the fleet defines. Otherwise the client is told why.
    private func mayChange(_ name: String, _ client: ClientID, _ caller: Caller) -> Bool {
        guard case .socket(let peer) = caller, let uid = peer.uid, uid == 0 || writers.contains(uid) else {
            let who: String
            switch caller {
            case .socket(let peer): who = peer.uid.map { "uid \($0)" } ?? "a TCP client"
            case .web: who = "a web page"
            }
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
