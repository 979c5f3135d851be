import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingService
import BearingLog
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The MQTT door: the values its chains pass, as gpsd JSON lines numbered per device (`"seq"`), to
/// `PREFIX/tpv`, `PREFIX/att` and `PREFIX/sky` at QoS 1 through the on-disk spool; `PREFIX/status` is a
/// retained `online` (the last will and a clean stop make it `offline`) and `PREFIX/spool` a retained
/// SPOOL object with the drops so far. A broker that is down costs the rest of Bearing nothing: values are
/// spooled on the pipeline queue and the client's thread sends them when it can, oldest first.
public final class MQTTDoor: Door {
    public let name = "MQTT door"
    public let topics: MQTTTopics
    let config: MQTTDoorConfig
    let core: PublishingCore
    let logger: Logger
    let outbox: MQTTOutbox
    let client: MQTTClient
    /// Fleet messages the broker delivered and the outbox read, to apply on the pipeline queue; the stream
    /// ends at shutdown (with or without a fleet topic).
    let fleetUpdates: AsyncStream<FleetMessage>
    let endFleetUpdates: AsyncStream<FleetMessage>.Continuation
    /// Where the fleet message in force is kept (beside the spool), so that a restart without the broker
    /// starts with it; and that message when the door opened (nil: none, or no fleet topic).
    let fleetFile: String
    let savedFleet: FleetMessage?
    /// The chain runs feeding the spool, made as the door opens (see `Door`); touched on the pipeline queue.
    nonisolated(unsafe) private var runs: [HubSubscription] = []
    /// The fleet payload in force ([]: the config's chains).
    private let inForce = Mutex<[UInt8]>([])

    public init(_ config: MQTTDoorConfig, broker: MQTTBroker, core: PublishingCore, logger: Logger,
         machineIDFile: String = "/etc/machine-id") throws {
        self.config = config
        self.core = core
        self.logger = logger
        let device: String
        if let d = config.device {
            device = d
        } else {
            let text = (try? AtomicFile.readText(machineIDFile, limit: 256)) ?? ""
            guard let identity = DeviceIdentity(machineID: text) else {
                throw DoorError(message: "mqtt: \(machineIDFile) holds no machine id (\(text.isEmpty ? "unreadable or empty" : "not 32 hex digits")), so the device has no name: set mqtt.device")
            }
            device = identity.device
        }
        topics = MQTTTopics(prefix: config.prefix ?? "bearing/\(device)")
        if let fleet = config.fleetTopic, let own = config.ownTopic(matching: fleet, device: device) {
            throw DoorError(message: "mqtt.fleet_topic \(fleet): this device publishes to it (\(own)), so it would read its own status as a fleet message; e.g. bearing/fleet/pipelines")
        }
        var clientConfig = MQTTClient.Configuration(broker: broker, clientID: config.clientID ?? "bearing-\(device)")
        clientConfig.username = config.username
        if let file = config.passwordFile {
            let password: Secret
            do {
                password = try Secret.firstLine(of: file)
            } catch {
                throw DoorError(message: "mqtt.password_file \(file): \(error.message) (errno \(error.errno))")
            }
            // libmosquitto takes a C string: a NUL would cut the password short.
            guard !password.value.contains("\0") else { throw DoorError(message: "mqtt.password_file \(file): the password has a NUL byte") }
            clientConfig.password = password
        }
        clientConfig.caFile = config.caFile
        clientConfig.certificateFile = config.certificateFile
        clientConfig.keyFile = config.keyFile
        clientConfig.keepalive = config.keepalive
        clientConfig.retryInitial = config.retryInitial
        clientConfig.retryMax = config.retryMax
        clientConfig.will = (topics.status, "offline")
        // Only fleet messages are received (and HA's `online`): a longer payload is refused by its size alone, and
        // an MQTT 5 broker is told the largest packet that carries one, so it does not even send a longer one.
        clientConfig.maxMessageBytes = FleetPipelines.maxMessageBytes
        let prefix = topics.prefix
        let discovery = config.homeAssistant.map { HomeAssistantDiscovery(discoveryPrefix: $0, device: device, prefix: prefix) }
        let subscribed = [config.fleetTopic, discovery?.birthTopic].compactMap { $0 }
        clientConfig.maxPacketBytes = MQTTClient.publishPacketBound(payload: FleetPipelines.maxMessageBytes, topics: subscribed)
        clientConfig.protocolVersion = config.protocolVersion
        let directory = config.spoolDirectory ?? MQTTDoorConfig.defaultSpoolDirectory()
        let spool: MessageSpool
        do {
            spool = try MessageSpool(directory: directory, maxBytes: config.spoolMaxBytes)
        } catch {
            throw DoorError(message: "mqtt.spool.directory \(directory): \(error)")
        }
        for note in spool.takeNotes() { logger.warning("MQTT spool: \(note)") }
        logger.info("MQTT door for \(broker)", metadata: [
            "client_id": "\(clientConfig.clientID)", "prefix": "\(topics.prefix)", "spool": "\(directory)",
            "waiting": "\(spool.pending)", "next_seq": "\(spool.nextSeq)", "libmosquitto": "\(MQTTClient.libraryVersion)",
            "protocol": "\(config.protocolVersion.rawValue)", "max_packet": "\(clientConfig.maxPacketBytes ?? 0)",
        ])
        if config.protocolVersion == .v311 {
            logger.warning("MQTT: mqtt.protocol is 3.1.1: \(MQTTOutbox.without5)")
        }
        fleetFile = "\(directory)/fleet.json"
        savedFleet = config.fleetTopic == nil ? nil : MQTTDoor.loadFleet(fleetFile, logger: logger)
        let (updates, continuation) = AsyncStream<FleetMessage>.makeStream(bufferingPolicy: .bufferingNewest(1))
        fleetUpdates = updates
        endFleetUpdates = continuation
        outbox = MQTTOutbox(spool: spool, topics: topics, broker: "\(broker)", window: config.window, discovery: discovery,
                            fleet: config.fleetTopic.map { ($0, continuation) }, logger: logger)
        do {
            client = try MQTTClient(configuration: clientConfig, delegate: outbox)
        } catch {
            throw DoorError(message: "mqtt: \(error)")
        }
        core.queue.sync { runs = feed(config.topics) }
        if let savedFleet, applyFleet(savedFleet, save: false) { inForce.withLock { $0 = savedFleet.payload } }
    }

    public func run(until shutdown: ShutdownEvent) async throws {
        // The broker's retained copy of the payload in force, sent at each (re)connection, changes nothing; the
        // same message published again is applied again (and so replaces the status of a refusal since).
        var inForce = self.inForce.withLock { $0 }
        client.start()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [endFleetUpdates] in
                await shutdown.wait()
                endFleetUpdates.finish()
            }
            for await message in fleetUpdates where !(message.retained && message.payload == inForce) {
                if applyFleet(message, save: true) { inForce = message.payload }
                client.wake()
            }
        }
        core.queue.sync { endRuns() }
        client.stop()
        outbox.close()
    }

    /// On the pipeline queue.
    private func endRuns() {
        for r in runs { r.cancel() }
        runs = []
    }

    /// Puts a fleet message in force in one block on the pipeline queue: the door's chain runs and, when the
    /// config allows, the socket's named pipelines, so no value passes between the old runs and the new. A
    /// name the config or a local client holds refuses the whole version. Returns whether it applied.
    ///
    /// With `save`, the message is saved for the next start before the status says it applied: the fleet reads
    /// "applied" as "kept", and the outbox may publish that status at once, woken by any value (CI 2026-12-02: a
    /// test read the status, then found no saved file).
    private func applyFleet(_ message: FleetMessage, save: Bool) -> Bool {
        let update = message.update
        let chains = MQTTDoor.chains(config.topics, with: update)
        let named: [NamedPipeline]? = config.fleetNamedPipelines ? (update?.pipelines ?? []) : nil
        let held: NamedPipeline? = core.queue.sync {
            if let named, let held = core.hub.fleetConflict(named) { return held }
            endRuns()
            runs = feed(chains)
            if let named { core.hub.replaceFleetPipelines(named) }
            return nil
        }
        if let held {
            // Only a version with pipelines can be refused here.
            if let update { outbox.fleetRefused(update.refusal(heldBy: held)) }
            return false
        }
        let notTaken = named == nil && !(update?.pipelines.isEmpty ?? true) ? "mqtt.fleet_named_pipelines is off on this device" : nil
        let names = (named ?? []).map(\.name).sorted()
        if save { saveFleet(message.payload) }
        outbox.fleetApplied(update?.version, pipelines: names, notTaken: notTaken)
        var metadata: Logger.Metadata = ["chains": "\(chains.keys.sorted().map { "\($0.rawValue): \(OperatorSpec.json(chains[$0]!))" }.joined(separator: "; "))"]
        if !names.isEmpty { metadata["pipelines"] = "\(names.joined(separator: ", "))" }
        if let notTaken { metadata["pipelines_not_taken"] = "\(notTaken)" }
        logger.notice("MQTT: fleet pipelines \(update.map { "version \($0.version)" } ?? "cleared: the config's chains") in force\(message.saved ? " (saved; until the broker says otherwise)" : "")", metadata: metadata)
        return true
    }

    /// Keeps the message in force for the next start (an empty one: the file goes); a failure is logged.
    /// At most `FleetPipelines.maxMessageBytes` are saved, as `loadFleet` reads.
    private func saveFleet(_ payload: [UInt8]) {
        do throws(SystemError) {
            if payload.count > FleetPipelines.maxMessageBytes {
                throw SystemError("write", "\(fleetFile): \(payload.count) bytes, more than a fleet message may have", errno: EFBIG)
            } else if payload.isEmpty {
                if unlink(fleetFile) != 0 && errno != ENOENT { throw SystemError("unlink", fleetFile) }
            } else {
                try AtomicFile.write(payload, to: fleetFile, mode: 0o640)
            }
        } catch {
            logger.warning("MQTT: fleet pipelines in force but not saved (\(error)); after a restart the config's chains run until the broker sends them again")
        }
    }

    /// The fleet message saved by an earlier run, read again as the broker's would be; nil when there is
    /// none, or it cannot be read or is refused (logged: the config's chains run until the broker sends one).
    static func loadFleet(_ path: String, logger: Logger) -> FleetMessage? {
        let payload: [UInt8]
        do throws(SystemError) {
            payload = try AtomicFile.read(path, limit: FleetPipelines.maxMessageBytes)
        } catch {
            if error.errno != ENOENT { logger.warning("MQTT: saved fleet pipelines not read: \(error); the config's chains until the broker sends a version") }
            return nil
        }
        switch FleetPipelines.parse(payload, classes: MQTTDataTopic.classes) {
        case .success(let update):
            return FleetMessage(payload: payload, update: update, saved: true)
        case .failure(let refusal):
            logger.warning("MQTT: saved fleet pipelines \(path) not used: \(refusal.message); the config's chains until the broker sends a version")
            return nil
        }
    }

    /// The chain runs for `chains`, sending into the spool (on the pipeline queue).
    private func feed(_ chains: [MQTTDataTopic: [OperatorSpec]]) -> [HubSubscription] {
        chains.keys.sorted().map { [core, outbox, client, topics] topic in
            let name = topics.data(topic)
            return core.hub.subscribe(topic.stream, through: chains[topic]!) { report in
                if let fix = report.fix { outbox.position(fix) }
                outbox.append(name, report) { client.wake() }
            }
        }
    }

    /// The config's chains with a fleet version's over them (nil: the config's alone).
    public static func chains(_ config: [MQTTDataTopic: [OperatorSpec]], with fleet: FleetPipelines?) -> [MQTTDataTopic: [OperatorSpec]] {
        var out = config
        for topic in MQTTDataTopic.allCases { if let chain = fleet?.mqtt[topic.stream.stream] { out[topic] = chain } }
        return out
    }

    /// HEALTH: whether the broker is connected, the spool's messages waiting for it, the MQTT version spoken
    /// (`3.1.1` when configured so or the broker refused 5) and, with MQTT 5, the largest packet the broker may send.
    public var health: [(String, HealthValue)] {
        let (connected, pending, bytes) = outbox.state.withLock { ($0.connected, $0.spool.pending, $0.spool.bytes) }
        let version = client.protocolVersion
        var out: [(String, HealthValue)] = [("connected", .bool(connected)), ("spool", .number(Double(pending))),
                                            ("spool_bytes", .number(Double(bytes))), ("protocol", .string(version.rawValue))]
        if version == .v5, let bound = client.configuration.maxPacketBytes { out.append(("max_packet", .number(Double(bound)))) }
        return out
    }

    public func close() {
        core.queue.sync { endRuns() }
        outbox.close()
    }
}

/// The door's topics under its prefix.
public struct MQTTTopics: Equatable, Sendable {
    public let prefix: String
    public var status: String { "\(prefix)/status" }
    public var spool: String { "\(prefix)/spool" }
    public var fleetStatus: String { "\(prefix)/pipelines/status" }
    public func data(_ topic: MQTTDataTopic) -> String { "\(prefix)/\(topic.rawValue)" }
}

/// A fleet message: its payload as delivered (or saved) and what it says (nil: back to the config).
struct FleetMessage: Sendable {
    var payload: [UInt8]
    var update: FleetPipelines?
    /// Sent by the broker because the door subscribed (MQTT's retain flag), not because it was just published.
    var retained = false
    /// Read from the door's saved copy at start, not from the broker.
    var saved = false
}

/// The spool and what is in flight, shared by the door's writer (appending) and the client's thread (sending,
/// acknowledging); the mutex serialises them. The pipeline queue only hands values to the writer: numbering,
/// encoding and the disk's writes and syncs happen on the writer's own serial queue, in the order the values
/// came, so a slow SD card delays no reader of the pipeline.
final class MQTTOutbox: MQTTClientDelegate {
    struct State {
        var spool: MessageSpool
        /// Message id → sequence number of what was sent on this connection and not yet acknowledged.
        var inFlight: [Int32: UInt64] = [:]
        /// The highest sequence number sent on this connection.
        var lastSent: UInt64 = 0
        var connected = false
        /// Since when the broker is unreachable (monotonic), the drops then (all, and past the bound), whether
        /// drops past the bound were logged, and the reasons logged.
        var outage: (since: Double, dropped: UInt64, unconfirmed: UInt64, pastBound: UInt64, dropsLogged: Bool, reasons: Set<String>)?
        /// After an outage, until its backlog is sent: the drops when the link came back. The spool is still at
        /// its bound then, so the oldest segment may go before it is acknowledged (more so on a slow board);
        /// those drops belong to the outage and are logged with it.
        var backlog: (dropped: UInt64, unconfirmed: UInt64)?
        /// The errno of the state saves failing, logged once until one succeeds.
        var saveFailure: Int32?
        /// The errno of the append failures being dropped, logged once until appends succeed again.
        var appendFailure: Int32?
        var lastSave = 0.0
        /// The drop count last published in SPOOL (nil: not since connecting).
        var publishedDropped: (dropped: UInt64, unconfirmed: UInt64)?
        var closed = false
        /// Home Assistant's configs are due (at the first connection, and when HA says it started).
        var discoveryDue = true
        /// The newest position for Home Assistant's tracker, not yet published (retained: only the last counts).
        var position: String?
        /// The fleet pipelines version in force (nil: the config's), and the status object not yet published.
        var fleetVersion: String?
        var fleetStatus: String?
        /// A Bearing object on the fleet topic was ignored (logged once as a notice).
        var ownObjectsIgnored = false
    }

    /// How every object Bearing publishes begins (`WireEncoding`); a fleet message never has a "class".
    static let ownObject = Array(#"{"class":"#.utf8)

    let state: Mutex<State>
    let topics: MQTTTopics
    let broker: String
    let window: Int
    let logger: Logger

    let discovery: HomeAssistantDiscovery?
    /// The fleet topic, and where accepted fleet pipelines go (the door applies them).
    let fleet: (topic: String, updates: AsyncStream<FleetMessage>.Continuation)?

    init(spool: sending MessageSpool, topics: MQTTTopics, broker: String, window: Int, discovery: HomeAssistantDiscovery?,
         fleet: (topic: String, updates: AsyncStream<FleetMessage>.Continuation)?, logger: Logger) {
        state = Mutex(State(spool: spool))
        self.discovery = discovery
        self.fleet = fleet
        self.topics = topics
        self.broker = broker
        self.window = window
        self.logger = logger
    }

    /// The spool's own serial context (see the type's comment).
    private let writer = DispatchQueue(label: "bearing.mqtt.spool")
    /// Values handed to `writer` and not spooled yet, and those dropped because too many were waiting.
    private let waiting = Atomic<Int>(0)
    private let droppedWaiting = Atomic<Int>(0)
    /// How many values may wait for a stalled disk (about 2 minutes of a 100 Hz ATT stream, a few MB); past
    /// it a value is dropped at once and counted in the spool's `dropped`, as a failed write is.
    static let maxWaiting = 10_000

    /// Hands one message to the writer (on the pipeline queue); `then` runs once it is spooled.
    func append(_ topic: String, _ report: Report, then: @escaping @Sendable () -> Void) {
        guard waiting.add(1, ordering: .relaxed).newValue <= Self.maxWaiting else {
            waiting.subtract(1, ordering: .relaxed)
            droppedWaiting.add(1, ordering: .relaxed)
            return
        }
        writer.async { [self] in
            spool(topic, report)
            waiting.subtract(1, ordering: .relaxed)
            then()
        }
    }

    /// Waits until every message handed to the writer is spooled.
    func flush() { writer.sync {} }

    /// Numbers and spools one message, the number written by the encoder (on the writer).
    private func spool(_ topic: String, _ report: Report) {
        let lost = UInt64(droppedWaiting.exchange(0, ordering: .relaxed))
        let outcome: (error: SystemError?, recovered: Bool) = state.withLock { s in
            guard !s.closed else { return (nil, false) }
            s.spool.countDropped(lost)
            do throws(SystemError) {
                _ = try s.spool.append(topic: topic) { seq, line in report.appendLine(seq: seq, to: &line) }
                defer { s.appendFailure = nil }
                return (nil, s.appendFailure != nil)
            } catch {
                let first = s.appendFailure != error.errno
                s.appendFailure = error.errno
                return (first ? error : nil, false)
            }
        }
        if let error = outcome.error {
            logger.error("MQTT spool: cannot write a message: \(error); messages are dropped (counted in \(topics.spool)) until it can, and those already spooled are kept")
        } else if outcome.recovered {
            logger.notice("MQTT spool: writing again")
        }
    }

    /// A test's slow disk under the spool (`MessageSpool.beforeWrite`).
    func slowDiskForTesting(_ stall: @escaping @Sendable () -> Void) {
        state.withLock { $0.spool.beforeWrite = stall }
    }

    /// Keeps the newest position for Home Assistant's tracker (on the pipeline queue).
    func position(_ fix: GPSFix) {
        guard discovery != nil, let p = HomeAssistantDiscovery.position(fix) else { return }
        state.withLock { $0.position = p }
    }

    /// The door applied a fleet version (nil: back to the config): its status goes out retained.
    func fleetApplied(_ version: String?, pipelines: [String], notTaken: String?) {
        state.withLock { s in
            s.fleetVersion = version
            s.fleetStatus = WireEncoding.fleetApplied(version: version, pipelines: pipelines, notTaken: notTaken)
        }
    }

    /// A fleet version refused (by its text, or by the door): nothing changes; the status says why and what
    /// stays in force, retained, and so does the log.
    func fleetRefused(_ refusal: FleetPipelines.Refusal) {
        let inForce = state.withLock { s in
            s.fleetStatus = WireEncoding.fleetRefused(refusal.message, version: refusal.version, inForce: s.fleetVersion)
            return s.fleetVersion
        }
        logger.warning("MQTT: \(refusal.message); \(MQTTOutbox.inForce(inForce))")
    }

    /// The line for drops made while an outage's backlog was being sent (nil: none).
    static func backlogDrops(dropped: UInt64, unconfirmed: UInt64) -> String? {
        guard dropped + unconfirmed > 0 else { return nil }
        let unsure = unconfirmed == 0 ? "" : " (and \(unconfirmed) in flight, dropped unconfirmed: the broker may have them)"
        return "\(dropped) more dropped while the outage's backlog was sent (the spool was still full)\(unsure)"
    }

    /// What stays in force after a refusal: `version` (nil: the config's chains).
    static func inForce(_ version: String?) -> String {
        version.map { "version \($0) stays in force" } ?? "the config's chains stay in force"
    }

    func close() {
        flush()
        let notes: [String] = state.withLock { s in
            guard !s.closed else { return [] }
            s.closed = true
            var notes = s.spool.takeNotes()
            do { try s.spool.saveState() } catch { notes.append("cannot save its state: \(error)") }
            s.spool.close()
            return notes
        }
        for n in notes { logger.warning("MQTT spool: \(n)") }
    }

    // MARK: The client's thread

    func mqttClient(_ client: MQTTClient, didConnect session: MQTTSession) {
        let (outage, pending, dropped, unconfirmed) = state.withLock { s in
            s.connected = true
            s.inFlight = [:]
            s.lastSent = s.spool.acknowledged
            s.publishedDropped = nil
            s.spool.rewind()
            if s.outage != nil { s.backlog = (s.spool.dropped, s.spool.unconfirmed) }
            defer { s.outage = nil }
            return (s.outage, s.spool.pending, s.spool.dropped, s.spool.unconfirmed)
        }
        do {
            try session.publish(topics.status, "online", retain: true)
            if let discovery { try session.subscribe(discovery.birthTopic) }
            if let fleet { try session.subscribe(fleet.topic) }
        } catch {
            logger.warning("MQTT: \(error)")
        }
        if let outage {
            let lost = dropped - outage.dropped, uncertain = unconfirmed - outage.unconfirmed
            let unsure = uncertain == 0 ? "" : " (and \(uncertain) in flight when the link went, dropped unconfirmed: the broker may have them)"
            logger.notice("MQTT: connected to \(broker) again after \(Int(Syscall.monotonicSeconds() - outage.since)) s; \(pending) messages waiting to be sent, \(lost) dropped meanwhile\(unsure)")
        } else {
            logger.info("MQTT: connected to \(broker)", metadata: ["waiting": "\(pending)"])
        }
    }

    func mqttClient(_ client: MQTTClient, didDisconnect reason: String, refusal: MQTTRefusal?, attempt: Int, retryIn: Double) {
        // The first failure of an outage, and each new reason in it (a TLS handshake may fail one way, then
        // another), are warnings; retries for a known reason are debug lines.
        let (first, newReason): (Bool, Bool) = state.withLock { s in
            s.connected = false
            s.inFlight = [:]
            guard s.outage != nil else {
                s.backlog = nil
                s.outage = (Syscall.monotonicSeconds(), s.spool.dropped, s.spool.unconfirmed, s.spool.droppedPastBound, false, [reason])
                return (true, true)
            }
            return (false, s.outage!.reasons.insert(reason).inserted)
        }
        let retry = String(printf: "%.1f", retryIn)
        if first {
            logger.warning("MQTT: \(broker): \(reason); trying again in \(retry) s and on, for ever (messages are spooled meanwhile; logged again when connected)")
        } else if newReason {
            logger.warning("MQTT: \(broker) still unreachable: \(reason); attempt \(attempt), next in \(retry) s")
        } else {
            logger.debug("MQTT: \(broker): \(reason); attempt \(attempt), next in \(retry) s")
        }
    }

    func mqttClient(_ client: MQTTClient, maySend session: MQTTSession) {
        fill(session)
    }

    func mqttClient(_ client: MQTTClient, didAcknowledge mid: Int32, session: MQTTSession) {
        state.withLock { s in
            guard s.inFlight.removeValue(forKey: mid) != nil else { return } // `status` and `spool` are not spooled
            // QoS 1 acknowledgements come in order (§4.6 of MQTT 3.1.1 and 5), but the mark only moves past what no
            // message in flight precedes.
            s.spool.acknowledge(through: s.inFlight.values.min().map { $0 - 1 } ?? s.lastSent)
        }
        fill(session)
    }

    func mqttClient(_ client: MQTTClient, didReceive message: MQTTMessage, session: MQTTSession) {
        // Fleet pipelines: a refused version changes nothing and says why; an accepted one goes to the door.
        if let fleet, message.topic == fleet.topic {
            if message.isOversized {
                fleetRefused(FleetPipelines.refusal(size: message.size))
                fill(session)
                return
            }
            // One of Bearing's own objects (a device's FLEET or ERROR status: fleet messages have no "class"),
            // e.g. from another device whose fleet topic is this one's status topic. Answering it with a
            // refusal would start a loop between them: it is ignored.
            if message.payload.starts(with: MQTTOutbox.ownObject) {
                let first = state.withLock { s in
                    defer { s.ownObjectsIgnored = true }
                    return !s.ownObjectsIgnored
                }
                let text = "MQTT: \(fleet.topic) holds a Bearing status object, not a fleet message: ignored (no status is published for it)"
                if first { logger.notice("\(text)") } else { logger.debug("\(text)") }
                return
            }
            switch FleetPipelines.parse(message.payload, classes: MQTTDataTopic.classes) {
            case .success(let update):
                fleet.updates.yield(FleetMessage(payload: message.payload, update: update, retained: message.retained))
            case .failure(let refusal):
                fleetRefused(refusal)
                fill(session)
            }
            return
        }
        // Home Assistant (re)started: its discovery configs again.
        if let discovery, message.topic == discovery.birthTopic, message.payload == Array("online".utf8) {
            state.withLock { $0.discoveryDue = true }
            fill(session)
        }
    }

    func mqttClientTick(_ client: MQTTClient, session: MQTTSession?) {
        let now = Syscall.monotonicSeconds()
        let (notes, dropsNow, spoolObject): ([String], (UInt64, Int)?, String?) = state.withLock { s in
            guard !s.closed else { return ([], nil, nil) }
            var notes = s.spool.takeNotes()
            if now - s.lastSave >= 5 {
                s.lastSave = now
                do throws(SystemError) {
                    try s.spool.saveState()
                    if s.saveFailure != nil { notes.append("its state is saved again") }
                    s.saveFailure = nil
                } catch {
                    if s.saveFailure != error.errno { notes.append("cannot save its state: \(error) (logged again when it can)") }
                    s.saveFailure = error.errno
                }
            }
            var drops: (UInt64, Int)?
            if let o = s.outage, !o.dropsLogged, s.spool.droppedPastBound > o.pastBound {
                s.outage?.dropsLogged = true
                drops = (s.spool.droppedPastBound - o.pastBound, s.spool.maxBytes)
            }
            // The outage's backlog is sent (no more than a window waits): the drops since the link came back.
            if s.connected, let b = s.backlog, s.spool.pending <= UInt64(window) {
                s.backlog = nil
                if let more = Self.backlogDrops(dropped: s.spool.dropped - b.dropped, unconfirmed: s.spool.unconfirmed - b.unconfirmed) {
                    notes.append(more)
                }
            }
            var object: String?
            // Published at least once per connection, and again when the drops change.
            if s.connected, s.publishedDropped.map({ $0 != (s.spool.dropped, s.spool.unconfirmed) }) ?? true {
                s.publishedDropped = (s.spool.dropped, s.spool.unconfirmed)
                object = WireEncoding.spool(pending: s.spool.pending, bytes: s.spool.bytes, bound: s.spool.maxBytes,
                                            dropped: s.spool.dropped, unconfirmed: s.spool.unconfirmed, nextSeq: s.spool.nextSeq)
            }
            return (notes, drops, object)
        }
        for n in notes { logger.warning("MQTT spool: \(n)") }
        if let (count, bound) = dropsNow {
            logger.warning("MQTT spool: full (\(bound >> 10) KiB): the oldest messages are dropped while \(broker) is unreachable (\(count) so far; the count is in \(topics.spool), the total logged when connected)")
        }
        if let spoolObject, let session {
            do { try session.publish(topics.spool, spoolObject, retain: true) } catch { logger.warning("MQTT: \(error)") }
        }
    }

    /// Why a broker that speaks 3.1.1 costs memory: what the log says of it.
    static let without5 = "the broker cannot be told the largest packet Bearing takes (MQTT 5's Maximum Packet Size), so a message "
        + "larger than \(FleetPipelines.maxMessageBytes >> 10) KiB on the fleet topic is received whole before Bearing refuses it "
        + "(libmosquitto holds the whole packet first); set the broker's max_packet_size"

    func mqttClient(_ client: MQTTClient, brokerSpeaks311Only refusal: String) {
        logger.warning("MQTT: \(broker) speaks MQTT 3.1.1 only (\(refusal)); 3.1.1 from now on: \(MQTTOutbox.without5)")
    }

    func mqttClient(_ client: MQTTClient, willClose session: MQTTSession) {
        do { try session.publish(topics.status, "offline", retain: true) } catch { logger.warning("MQTT: \(error)") }
    }

    /// Sends Home Assistant's configs and position when due, then spooled messages, oldest first, until
    /// `window` are in flight.
    private func fill(_ session: MQTTSession) {
        let failure = state.withLock { s -> MQTTError? in
            guard s.connected, !s.closed else { return nil }
            do throws(MQTTError) {
                if let discovery, s.discoveryDue {
                    for c in discovery.configs { try session.publish(c.topic, c.payload, retain: true) }
                    s.discoveryDue = false
                }
                if let discovery, let p = s.position {
                    try session.publish(discovery.positionTopic, p, retain: true)
                    s.position = nil
                }
                if let status = s.fleetStatus {
                    try session.publish(topics.fleetStatus, status, retain: true)
                    s.fleetStatus = nil
                }
            } catch {
                return error
            }
            while s.inFlight.count < window {
                let batch = s.spool.take(window - s.inFlight.count)
                if batch.isEmpty { return nil }
                for r in batch {
                    do throws(MQTTError) {
                        s.inFlight[try session.publish(r.topic, r.payload)] = r.seq
                        s.lastSent = r.seq
                        s.spool.markSent(through: r.seq)
                    } catch {
                        // The connection is failing; what was not sent goes again after the reconnect.
                        return error
                    }
                }
            }
            return nil
        }
        if let failure { logger.debug("MQTT: \(failure)") }
    }
}
