import BearingCore
import BearingIO
import Foundation
import Logging
@preconcurrency import OpenCombine
import OpenCombineDispatch

/// The daemon's wiring: gpsd client → adapter (subjects) → operator chains → socket server and logs.
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
    private var stateLine: String

    public init(config: AgentConfig, logger: Logger) {
        self.config = config
        self.logger = logger
        client = GPSDClient(configuration: config.gpsd)
        var serverConfig = SocketServer.Configuration(path: config.socket.path)
        serverConfig.mode = config.socket.mode
        serverConfig.maxClients = config.socket.maxClients
        serverConfig.clientQueue = config.socket.clientQueue
        serverConfig.release = Agent.release
        stateLine = GPSDDialect.state(SourceState(source: "gpsd", endpoint: config.gpsd.endpoint,
                                                  state: .connecting(attempt: 0), time: Agent.now()))
        let box = WeakAgent()
        server = SocketServer(configuration: serverConfig, logger: logger) {
            box.agent?.snapshot() ?? ServerSnapshot()
        }
        box.agent = self
        client.delegate = adapter
    }

    static func now() -> GPSTimestamp {
        let t = Syscall.wallClock()
        return GPSTimestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
    }

    private func snapshot() -> ServerSnapshot {
        lock.lock(); defer { lock.unlock() }
        return ServerSnapshot(stateLines: [stateLine], lastTPV: lastTPV, lastSKY: lastSKY,
                              devices: ["gpsd://\(config.gpsd.endpoint)"])
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
            .sink { [weak self] state in self?.stateChanged(state) }
            .store(in: &subscriptions)

        adapter.failures
            .sink { [weak self] failure in self?.logger.warning("gpsd: \(failure.message)", metadata: ["gpsd": "\(failure.endpoint)"]) }
            .store(in: &subscriptions)
    }

    private func emit(_ className: String, _ line: String) {
        server.publish(className: className, line: line)
        dataLog?.append(line)
        logger.trace("\(line)")
    }

    private func stateChanged(_ state: ConnectionState) {
        let line = GPSDDialect.state(SourceState(source: "gpsd", endpoint: config.gpsd.endpoint, state: state, time: Self.now()))
        lock.lock()
        stateLine = line
        lock.unlock()
        emit("STATE", line)
        let meta: Logger.Metadata = ["gpsd": "\(config.gpsd.endpoint)"]
        switch state {
        case .connected:
            logger.notice("gpsd connected", metadata: meta)
            lastDisconnectCode = nil
        case .disconnected(let reason):
            // A retry loop against an absent gpsd logs its first failure loudly and the repeats quietly.
            if reason == .stopped {
                logger.info("gpsd session closed", metadata: meta)
            } else if reason.code == lastDisconnectCode {
                logger.debug("gpsd still unavailable: \(reason)", metadata: meta)
            } else {
                logger.warning("gpsd disconnected: \(reason)", metadata: meta)
            }
            lastDisconnectCode = reason.code
        case .connecting(let attempt):
            logger.debug("connecting to gpsd (attempt \(attempt))", metadata: meta)
        }
    }

    /// Only touched from the gpsd client's thread, where state changes arrive.
    private var lastDisconnectCode: String?

    /// Reopens the data log (after rotation).
    public func reopenLogs() { dataLog?.reopen() }

    /// Stops the gpsd client, drains the pipeline, closes every client and the socket, flushes the data log.
    public func stop() {
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
