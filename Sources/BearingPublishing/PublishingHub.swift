import BearingModel
import BearingWire
import OpenCombine

/// The central service that computes every operator chain and decides who receives what.
///
/// Values enter unfiltered (`publish`) and fan out to chain runs: one run of the configured default
/// chain per stream (its output also feeds POLL and the data log), one run per named pipeline in use
/// (computed once however many clients subscribe to it), and one run per client that sent chains of its
/// own. Each run delivers its output to the clients routed to it. State objects (STATE, CALIBRATION)
/// are kept and replayed to each client that starts watching; MAG is unchained and opt-in.
///
/// Not thread-safe by design: every call comes on one serial context (the agent's pipeline queue), the
/// same one its scheduler runs time-based operators on. No I/O: lines leave through `deliver`.
public final class PublishingHub<S: Scheduler> {
    /// Sends `line` to each of `clients` (in order with everything delivered before).
    public typealias Deliver = (_ line: String, _ clients: [ClientID]) -> Void

    public let scheduler: S
    /// Where the clients' lines go: the socket door's transport, once it serves (`PublishingCore.serveClients`);
    /// until then a client cannot have connected, and nothing is delivered.
    public var deliver: Deliver
    /// Sees every object of the default chains and every state object (the data log).
    public var observer: ((_ className: String, _ line: String) -> Void)?
    /// Sees each WATCH once it is in force: the client and its options (a replay that waits for a reader).
    public var watchObserver: ((_ client: ClientID, _ options: WatchOptions) -> Void)?
    public let release: String

    public private(set) var defaults: [StreamKey: [OperatorSpec]]
    public private(set) var named: [String: NamedPipeline] = [:]

    private enum Owner: Hashable {
        case standard
        case named(String)
        case client(ClientID)
    }

    private struct RunKey: Hashable {
        var owner: Owner
        var key: StreamKey
    }

    private final class Run {
        var recipients: [ClientID] = []
        var cancellable: AnyCancellable?
    }

    private struct ClientState {
        var options = WatchOptions()
        var routes: [StreamKey: Owner] = [:]
    }

    /// One per stream; runs get its values in the order they subscribed (a replay's order too).
    private var inputs: [StreamKey: OrderedSubject<Report>] = [:]
    private var runs: [RunKey: Run] = [:]
    private var clients: [ClientID: ClientState] = [:]
    /// Latest output of each default chain (POLL).
    private var latest: [StreamKey: Report] = [:]
    /// Latest STATE object of each source, and the CALIBRATION object: replayed on WATCH.
    private var states: [(source: String, line: String)] = []
    private var calibrationLine: String?
    /// Recipients of unchained classes (STATE, CALIBRATION, MAG), rebuilt when a WATCH changes.
    private var unchainedRecipients: [String: [ClientID]] = [:]
    /// Device paths: the fixed ones (gpsd's endpoint), each source's device while it has one (`setDevice`:
    /// a sensor once found, at the address it answered at), then every other device a report named.
    private var fixedDevices: [String]
    private var sourceDevices: [(source: String, path: String?)] = []
    private var reportedDevices: [String] = []
    private var devices: [String] {
        var listed: [String] = []
        for path in fixedDevices + sourceDevices.compactMap(\.path) + reportedDevices where !listed.contains(path) { listed.append(path) }
        return listed
    }

    public init(defaults: [StreamKey: [OperatorSpec]], named: [NamedPipeline] = [], devices: [String] = [],
                release: String, scheduler: S, deliver: @escaping Deliver = { _, _ in }) {
        self.defaults = defaults
        self.scheduler = scheduler
        self.deliver = deliver
        self.release = release
        fixedDevices = devices
        for p in named { self.named[p.name] = p }
        for key in StreamKey.all {
            inputs[key] = OrderedSubject()
            startRun(RunKey(owner: .standard, key: key))
        }
    }

    // MARK: Values in

    /// One unfiltered value from `source`.
    public func publish(_ report: Report, from source: StreamSource) {
        let key = StreamKey(report.stream, source)
        if let device = report.device, !reportedDevices.contains(device) { reportedDevices.append(device) }
        inputs[key]?.send(report)
    }

    /// The device `source` reads now (nil: none yet, e.g. a sensor not found): listed in DEVICES once, in the
    /// order the sources were first set (a nil sets the order too).
    public func setDevice(_ path: String?, of source: String) {
        if let i = sourceDevices.firstIndex(where: { $0.source == source }) {
            sourceDevices[i].path = path
        } else {
            sourceDevices.append((source, path))
        }
    }

    /// A source's STATE object (kept per source and replayed to clients that start watching); sent now
    /// only when `isTransition` (see `SourceStateTransitions`).
    public func publishState(source: String, line: String, isTransition: Bool = true) {
        if let i = states.firstIndex(where: { $0.source == source }) { states[i].line = line } else { states.append((source, line)) }
        if isTransition { publishUnchained("STATE", line) }
    }

    /// The CALIBRATION object (kept and replayed); unchanged objects are not sent again.
    public func publishCalibration(_ line: String) {
        guard line != calibrationLine else { return }
        calibrationLine = line
        publishUnchained("CALIBRATION", line)
    }

    /// Raw magnetometer samples, for clients that list MAG (not logged).
    public func publishMAG(_ line: String) {
        if let to = unchainedRecipients["MAG"], !to.isEmpty { deliver(line, to) }
    }

    /// Whether a client watches `className` now, chained (TPV, ATT, …) or not (STATE, CALIBRATION, MAG).
    public func hasWatchers(_ className: String) -> Bool {
        if let recipients = unchainedRecipients[className] { return !recipients.isEmpty }
        return clients.values.contains { $0.options.wants(className) }
    }

    private func publishUnchained(_ className: String, _ line: String) {
        if let to = unchainedRecipients[className], !to.isEmpty { deliver(line, to) }
        observer?(className, line)
    }

    /// The values of `key` through `chain`, for a reader inside the process (a door): a run of its own, fed
    /// like every other, on this hub's context; `receive` gets each value there. The run lasts until the
    /// subscription is cancelled or released. Doors see no OpenCombine type: this is their whole API.
    public func subscribe(_ key: StreamKey, through chain: [OperatorSpec], _ receive: @escaping (Report) -> Void) -> HubSubscription {
        HubSubscription(Pipeline.build(inputs[key]!.eraseToAnyPublisher(), chain, for: key.stream, scheduler: scheduler).sink(receiveValue: receive))
    }

    // MARK: Clients

    /// A new connection: it gets VERSION, as from gpsd.
    public func connect(_ client: ClientID) {
        clients[client] = ClientState()
        deliver(WireEncoding.version(release: release), [client])
    }

    public func disconnect(_ client: ClientID) {
        guard let state = clients.removeValue(forKey: client) else { return }
        for (key, owner) in state.routes { leave(RunKey(owner: owner, key: key), client) }
        rebuildUnchained()
    }

    /// Answers one parsed request; what is not the hub's to answer (CALIBRATION, PIPELINE) is the caller's.
    public func handle(_ request: ClientRequest, from client: ClientID, now: GPSTimestamp) {
        switch request {
        case .watch(nil):
            reply(client, WireEncoding.watch(clients[client]?.options ?? WatchOptions()))
        case .watch(let change?):
            watch(client, change)
        case .version:
            reply(client, WireEncoding.version(release: release))
        case .devices:
            reply(client, WireEncoding.devices(devices))
        case .poll:
            reply(client, WireEncoding.poll(time: now, tpv: latest[StreamKey(.tpv, .gpsd)]?.line, sky: latest[StreamKey(.sky, .gpsd)]?.line,
                                            att: [StreamKey(.att, .compass), StreamKey(.att, .gpsd)].compactMap { latest[$0]?.line }))
        case .pipelines:
            reply(client, pipelinesObject())
        case .calibration, .definePipeline, .deletePipeline, .blackBox, .calibrationPoints, .onlineCalibration, .saveBlackBox, .health, .swing:
            reply(client, WireEncoding.error("this request is answered by the agent"))
        }
    }

    /// Sends `line` to one client.
    public func reply(_ client: ClientID, _ line: String) {
        guard clients[client] != nil else { return }
        deliver(line, [client])
    }

    private func watch(_ client: ClientID, _ change: WatchChange) {
        guard var state = clients[client] else { return }
        let options = state.options.applying(change)
        if let name = options.pipeline, named[name] == nil {
            let known = named.keys.sorted()
            reply(client, WireEncoding.error("WATCH: no pipeline named \"\(name)\"; \(known.isEmpty ? "none is defined" : "defined: \(known.joined(separator: ", "))"); the previous options stay in force"))
            return
        }
        let starting = options.enable && options.json && !(state.options.enable && state.options.json)
        state.options = options
        clients[client] = state
        reroute(client)
        rebuildUnchained()
        deliver(WireEncoding.devices(devices), [client])
        deliver(WireEncoding.watch(options), [client])
        if starting {
            if options.wants("STATE") { for s in states { deliver(s.line, [client]) } }
            if options.wants("CALIBRATION"), let line = calibrationLine { deliver(line, [client]) }
        }
        watchObserver?(client, options)
    }

    // MARK: Named pipelines

    /// Defines or replaces a named pipeline; clients subscribed to it switch to the new chains.
    public func define(_ pipeline: NamedPipeline) {
        named[pipeline.name] = pipeline
        // Runs of the old definition end; users are routed afresh.
        for (runKey, run) in runs where runKey.owner == .named(pipeline.name) {
            run.cancellable?.cancel()
            runs[runKey] = nil
        }
        for (id, state) in clients where state.options.pipeline == pipeline.name {
            var s = state
            s.routes = s.routes.filter { $0.value != .named(pipeline.name) }
            clients[id] = s
            reroute(id)
        }
    }

    /// Removes a named pipeline; its users fall back to the default chains. Returns whether it existed.
    @discardableResult
    public func remove(named name: String) -> Bool {
        guard named.removeValue(forKey: name) != nil else { return false }
        for (id, state) in clients where state.options.pipeline == name {
            var s = state
            s.options.pipeline = nil
            clients[id] = s
            reroute(id)
        }
        return true
    }

    /// The first of the fleet's `pipelines` whose name the config or a local client holds: the fleet may not
    /// take it (nil: none).
    public func fleetConflict(_ pipelines: [NamedPipeline]) -> NamedPipeline? {
        for p in pipelines { if let held = named[p.name], held.origin != .fleet { return held } }
        return nil
    }

    /// Makes `pipelines` the fleet's whole set: its earlier pipelines not among them go (their users fall back
    /// to the default chains), the others are defined; one unchanged keeps its runs. Check `fleetConflict` first.
    public func replaceFleetPipelines(_ pipelines: [NamedPipeline]) {
        let names = Set(pipelines.map(\.name))
        for (name, p) in named where p.origin == .fleet && !names.contains(name) { remove(named: name) }
        for p in pipelines where named[p.name] != p { define(p) }
    }

    /// How many clients use each named pipeline.
    public var namedUsers: [String: Int] {
        var users: [String: Int] = [:]
        for state in clients.values { if let n = state.options.pipeline { users[n, default: 0] += 1 } }
        return users
    }

    /// How many chain runs are live: one per default stream, plus named and client chains in use.
    public var runCount: (standard: Int, named: Int, client: Int) {
        var s = 0, n = 0, c = 0
        for k in runs.keys {
            switch k.owner {
            case .standard: s += 1
            case .named: n += 1
            case .client: c += 1
            }
        }
        return (s, n, c)
    }

    public var clientCount: Int { clients.count }

    public func pipelinesObject() -> String {
        WireEncoding.pipelines(defaults: defaults, named: named.keys.sorted().map { named[$0]! }, users: namedUsers)
    }

    // MARK: Routing

    private func route(_ state: ClientState, _ client: ClientID, _ key: StreamKey) -> Owner? {
        let o = state.options
        guard o.wants(key.stream.rawValue) else { return nil }
        if o.pipelines[key.stream] != nil { return .client(client) }
        if let name = o.pipeline, named[name]?.chains[key.stream] != nil { return .named(name) }
        return .standard
    }

    private func reroute(_ client: ClientID) {
        guard var state = clients[client] else { return }
        let old = state.routes
        var new: [StreamKey: Owner] = [:]
        for key in StreamKey.all { new[key] = route(state, client, key) }
        state.routes = new
        clients[client] = state
        for key in StreamKey.all {
            let was = old[key], now = new[key]
            // A client's own chain is rebuilt whenever its WATCH names chains: it may have changed.
            if was == now, case .client? = now {
                leave(RunKey(owner: .client(client), key: key), client)
                join(RunKey(owner: .client(client), key: key), client)
                continue
            }
            if was == now { continue }
            if let was { leave(RunKey(owner: was, key: key), client) }
            if let now { join(RunKey(owner: now, key: key), client) }
        }
    }

    private func join(_ runKey: RunKey, _ client: ClientID) {
        let run = runs[runKey] ?? startRun(runKey)
        if !run.recipients.contains(client) { run.recipients.append(client) }
    }

    private func leave(_ runKey: RunKey, _ client: ClientID) {
        guard let run = runs[runKey] else { return }
        run.recipients.removeAll { $0 == client }
        if run.recipients.isEmpty, runKey.owner != .standard {
            run.cancellable?.cancel()
            runs[runKey] = nil
        }
    }

    private func chain(for runKey: RunKey) -> [OperatorSpec] {
        switch runKey.owner {
        case .standard: return defaults[runKey.key] ?? []
        case .named(let n): return named[n]?.chains[runKey.key.stream] ?? []
        case .client(let id): return clients[id]?.options.pipelines[runKey.key.stream] ?? []
        }
    }

    @discardableResult
    private func startRun(_ runKey: RunKey) -> Run {
        let run = Run()
        runs[runKey] = run
        let isDefault = runKey.owner == .standard
        let key = runKey.key
        run.cancellable = Pipeline.build(inputs[key]!.eraseToAnyPublisher(), chain(for: runKey), for: key.stream, scheduler: scheduler)
            .sink { [unowned self, unowned run] report in
                if isDefault {
                    // POLL answers with the satellites, as gpsd's does: a SKY of DOPs only (gpsd 3.25 sends them between
                    // those that list the satellites) does not take their place.
                    if self.latest[key] == nil || !Self.isSkyOfDOPsOnly(report) { self.latest[key] = report }
                    self.observer?(key.stream.rawValue, report.line)
                }
                if !run.recipients.isEmpty { self.deliver(report.line, run.recipients) }
            }
        return run
    }

    private static func isSkyOfDOPsOnly(_ report: Report) -> Bool {
        if case .sky(let sky) = report.payload { return sky.satellites == nil }
        return false
    }

    private func rebuildUnchained() {
        var map: [String: [ClientID]] = [:]
        for className in ["STATE", "CALIBRATION", "MAG"] {
            map[className] = clients.keys.sorted().filter { clients[$0]!.options.wants(className) }
        }
        unchainedRecipients = map
    }
}

/// A door's run on the hub (`PublishingHub.subscribe`): values flow until `cancel()` or release. Used on the
/// hub's context only.
public final class HubSubscription {
    private var run: AnyCancellable?
    init(_ run: AnyCancellable) { self.run = run }
    public func cancel() {
        run?.cancel()
        run = nil
    }
}

/// Unchecked Sendable: confined, not locked: every call comes on the serial context its scheduler runs on (the agent's pipeline queue).
extension PublishingHub: @unchecked Sendable {}
