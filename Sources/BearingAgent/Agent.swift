import BearingCore
import BearingIO
import BearingSensors
import Foundation
import Logging
@preconcurrency import OpenCombine
import OpenCombineDispatch

/// The daemon's wiring: gpsd client and magnetometer reader → adapters (subjects) → operator chains →
/// socket server and logs. The two inputs are independent: a failing I2C bus never holds up the GPS path.
public final class Agent: @unchecked Sendable {
    public static let release = "bearing 0.1.0"

    public let config: AgentConfig
    private let logger: Logger
    private let adapter = GPSPublisherAdapter(initialState: .connecting(attempt: 0))
    private let client: GPSDClient
    private let server: SocketServer
    private var dataLog: DataLog?
    private let pipelineQueue = DispatchQueue(label: "bearing.pipeline")
    private var subscriptions: [AnyCancellable] = []

    private let lock = NSLock()
    private var lastTPV: String?
    private var lastSKY: String?
    private var lastATT: String?
    /// The latest STATE line of each source, replayed to clients that start watching.
    private var stateLines: [String]

    private let magAdapter = MagnetometerPublisherAdapter(initialState: .connecting(attempt: 0))
    private let reader: MagnetometerReader?
    private let declination: DeclinationTracker?
    /// The calibration in force; nil without a magnetometer.
    public let calibration: CalibrationStore?
    private var calibrationLine: String?
    /// Each only touched from its source's thread, where that source's state changes arrive.
    private var gpsdLog = SourceStateLog(source: "gpsd", index: 0, connecting: "connecting to gpsd", lost: "gpsd disconnected",
                                         stillLost: "gpsd still unavailable", stopped: "gpsd session closed")
    private var magnetometerLog = SourceStateLog(source: "magnetometer", index: 1, connecting: "looking for the magnetometer",
                                                 lost: "magnetometer unavailable", stillLost: "magnetometer still unavailable",
                                                 stopped: "magnetometer stopped")
    private var lastMagFailure: String?

    /// `openBus` opens the magnetometer's bus by path (a `LinuxI2CBus`, or a simulated bus for the demo).
    public init(config: AgentConfig, logger: Logger,
                openBus: @escaping (String) throws(I2CError) -> I2CBus = { path throws(I2CError) in try LinuxI2CBus(path: path) }) {
        self.config = config
        self.logger = logger
        client = GPSDClient(configuration: config.gpsd)
        if config.magnetometer.enabled {
            let r = MagnetometerReader(configuration: config.magnetometer.reader, openBus: openBus, now: Agent.now)
            reader = r
            declination = config.heading.trueNorth ? DeclinationTracker(fallback: config.heading.fallbackPosition) : nil
            calibration = CalibrationStore(path: config.calibrationPath, expectedChip: config.magnetometer.reader.chip, logger: logger)
        } else {
            reader = nil
            declination = nil
            calibration = nil
        }
        var serverConfig = SocketServer.Configuration(path: config.socket.path)
        serverConfig.mode = config.socket.mode
        serverConfig.maxClients = config.socket.maxClients
        serverConfig.clientQueue = config.socket.clientQueue
        serverConfig.release = Agent.release
        let endpoints = [config.gpsd.endpoint] + (reader.map { [$0.endpoint] } ?? [])
        stateLines = zip(["gpsd", "magnetometer"], endpoints).map { source, endpoint in
            GPSDDialect.state(SourceState(source: source, endpoint: endpoint, state: .connecting(attempt: 0), time: Agent.now()))
        }
        let box = WeakAgent()
        server = SocketServer(configuration: serverConfig, logger: logger) {
            box.agent?.snapshot() ?? ServerSnapshot()
        }
        box.agent = self
        if let store = calibration {
            store.onChange = { line in box.agent?.calibrationChanged(line) }
            server.calibrationRequest = { reload in
                if reload, let reason = store.reload(reason: "client request") {
                    return .failure(ClientRequestError(message: "CALIBRATION: reload rejected: \(reason); the calibration in force is unchanged"))
                }
                return .success(store.line())
            }
        }
        client.delegate = adapter
        reader?.delegate = magAdapter
    }

    public static func now() -> GPSTimestamp {
        let t = Syscall.wallClock()
        return GPSTimestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
    }

    private func snapshot() -> ServerSnapshot {
        lock.lock(); defer { lock.unlock() }
        var snapshot = ServerSnapshot(stateLines: stateLines,
                                      lastTPV: lastTPV, lastSKY: lastSKY,
                                      devices: ["gpsd://\(config.gpsd.endpoint)"] + (reader.map { [$0.endpoint] } ?? []))
        snapshot.lastATT = lastATT
        snapshot.calibrationLine = calibrationLine
        return snapshot
    }

    /// Opens the socket and data log, wires the publishers and starts the gpsd client.
    public func start() throws {
        if let path = config.log.dataLog {
            dataLog = try DataLog(path: path, logger: logger)
        }
        try server.start()
        logger.info("listening", metadata: ["socket": "\(config.socket.path)", "mode": "\(String(config.socket.mode, radix: 8))"])
        wire()
        let api = GPSDClient.apiVersion
        logger.info("connecting to gpsd", metadata: ["gpsd": "\(config.gpsd.endpoint)", "libgps_api": "\(api.major).\(api.minor)"])
        client.start()
        if let reader, let calibration {
            calibration.reload(reason: "start")
            let m = config.magnetometer
            logger.info("reading magnetometer", metadata: [
                "bus": "\(m.reader.bus)", "chip": "\(m.reader.chip ?? "auto")",
                "address": "\(m.reader.address.map(I2CError.hex) ?? "auto")", "rate": "\(m.reader.settings.rate)",
                "orientation": "\(m.orientation)", "board": "\(config.board ?? "none")",
                "calibration": "\(calibration.current.map { "\($0.model.rawValue) fitted \($0.time)" } ?? "none")",
            ])
            reader.start()
        }
    }

    private func wire() {
        let scheduler = pipelineQueue.ocombine
        Pipeline.fixes(adapter.fixes, config.tpvPipeline, scheduler: scheduler)
            .map(GPSDDialect.tpv)
            .sink { [weak self] line in
                guard let self else { return }
                self.lock.lock(); self.lastTPV = line; self.lock.unlock()
                self.emit("TPV", line)
            }
            .store(in: &subscriptions)

        // The SKY chain was validated when the config was read; a failure here is a programming error
        // reported, not a crash.
        do {
            try Pipeline.skies(adapter.skies, config.skyPipeline, scheduler: scheduler)
                .map(GPSDDialect.sky)
                .sink { [weak self] line in
                    guard let self else { return }
                    self.lock.lock(); self.lastSKY = line; self.lock.unlock()
                    self.emit("SKY", line)
                }
                .store(in: &subscriptions)
        } catch {
            logger.error("SKY pipeline rejected; SKY is not published", metadata: ["error": "\(error)"])
        }

        adapter.states
            .removeDuplicates()
            .sink { [weak self] state in
                guard let self else { return }
                self.publishState(state, log: &self.gpsdLog, endpoint: self.config.gpsd.endpoint)
            }
            .store(in: &subscriptions)

        adapter.failures
            .sink { [weak self] failure in self?.logger.warning("gpsd: \(failure.message)", metadata: ["gpsd": "\(failure.endpoint)"]) }
            .store(in: &subscriptions)

        if reader != nil { wireCompass(scheduler: scheduler) }
    }

    private func wireCompass(scheduler: DispatchQueue.OCombine) {
        if let declination {
            adapter.fixes
                .sink { [weak self] fix in
                    if let d = declination.update(with: fix) {
                        self?.logger.debug("declination \(String(format: "%.2f", d))° from the GPS fix (WMM2025)")
                    }
                }
                .store(in: &subscriptions)
        }
        let orientation = config.magnetometer.orientation
        let store = calibration
        let declination = self.declination
        let server = self.server
        // Raw samples for `bearing calibrate` and other clients that ask for MAG, formatted only then.
        magAdapter.samples
            .sink { sample in
                if server.hasWatchers("MAG") { server.publish(className: "MAG", line: GPSDDialect.mag(sample)) }
            }
            .store(in: &subscriptions)
        let attitudes = magAdapter.samples
            .map { sample in
                Compass.attitude(sample, orientation: orientation, calibration: store?.calibration(for: sample.chip) ?? .identity,
                                 declination: declination?.declination(at: sample.time))
            }
            .eraseToAnyPublisher()
        do {
            try Pipeline.attitudes(attitudes, config.attPipeline, scheduler: scheduler)
                .map(GPSDDialect.att)
                .sink { [weak self] line in
                    guard let self else { return }
                    self.lock.lock(); self.lastATT = line; self.lock.unlock()
                    self.emit("ATT", line)
                }
                .store(in: &subscriptions)
        } catch {
            logger.error("ATT pipeline rejected; ATT is not published", metadata: ["error": "\(error)"])
        }
        magAdapter.states
            .removeDuplicates()
            .sink { [weak self] state in
                guard let self, let reader = self.reader else { return }
                if state == .connected { self.lastMagFailure = nil }
                self.publishState(state, log: &self.magnetometerLog, endpoint: reader.endpoint)
            }
            .store(in: &subscriptions)
        magAdapter.failures
            .sink { [weak self] failure in
                guard let self else { return }
                // A sensor that keeps failing the same way is logged once loudly, then quietly.
                let text = failure.description
                if text == self.lastMagFailure { self.logger.debug("magnetometer: \(text)") } else { self.logger.warning("magnetometer: \(text)") }
                self.lastMagFailure = text
            }
            .store(in: &subscriptions)
    }

    private func emit(_ className: String, _ line: String) {
        server.publish(className: className, line: line)
        dataLog?.append(line)
        logger.trace("\(line)")
    }

    /// Publishes a source's STATE, keeps it for replay, and logs the change.
    private func publishState(_ state: ConnectionState, log: inout SourceStateLog, endpoint: String) {
        let line = GPSDDialect.state(SourceState(source: log.source, endpoint: endpoint, state: state, time: Self.now()))
        lock.lock()
        stateLines[log.index] = line
        lock.unlock()
        emit("STATE", line)
        log.record(state, logger: logger, metadata: [log.source: "\(endpoint)"])
    }

    /// Reopens the data log (after rotation).
    public func reopenLogs() { dataLog?.reopen() }

    /// Reloads the calibration file; returns the reason when it was rejected (the old one stays).
    @discardableResult
    public func reloadCalibration(reason: String) -> String? {
        calibration?.reload(reason: reason)
    }

    private func calibrationChanged(_ line: String) {
        lock.lock()
        let changed = line != calibrationLine
        calibrationLine = line
        lock.unlock()
        if changed { emit("CALIBRATION", line) }
    }

    /// Stops the gpsd client, drains the pipeline, closes every client and the socket, flushes the data log.
    public func stop() {
        reader?.stop()
        client.stop()
        pipelineQueue.sync {}
        subscriptions.removeAll()
        server.stop()
        dataLog?.close()
        logger.info("stopped")
    }

    /// The socket path in use.
    public var socketPath: String { config.socket.path }
}

private final class WeakAgent: @unchecked Sendable {
    weak var agent: Agent?
}

/// How one source's state changes are logged: a retry loop against an absent source logs its first
/// failure loudly and the repeats quietly.
struct SourceStateLog {
    let source: String
    /// Where the source's line stands in the replayed STATE lines.
    let index: Int
    let connecting: String, lost: String, stillLost: String, stopped: String
    private var lastDisconnectCode: String?

    init(source: String, index: Int, connecting: String, lost: String, stillLost: String, stopped: String) {
        self.source = source
        self.index = index
        self.connecting = connecting
        self.lost = lost
        self.stillLost = stillLost
        self.stopped = stopped
    }

    mutating func record(_ state: ConnectionState, logger: Logger, metadata: Logger.Metadata) {
        switch state {
        case .connected:
            logger.notice("\(source) connected", metadata: metadata)
            lastDisconnectCode = nil
        case .disconnected(let reason):
            if reason == .stopped {
                logger.info("\(stopped)", metadata: metadata)
            } else if reason.code == lastDisconnectCode {
                logger.debug("\(stillLost): \(reason)", metadata: metadata)
            } else {
                logger.warning("\(lost): \(reason)", metadata: metadata)
            }
            lastDisconnectCode = reason.code
        case .connecting(let attempt):
            logger.debug("\(connecting) (attempt \(attempt))", metadata: metadata)
        }
    }
}
