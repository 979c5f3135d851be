import BearingCore
import BearingIO
import Foundation

/// Receives what a `MagnetometerReader` reads. All calls come on the reader's own thread, in order.
public protocol MagnetometerReaderDelegate: AnyObject {
    func magnetometerReader(_ reader: MagnetometerReader, didReceive sample: MagneticSample)
    func magnetometerReader(_ reader: MagnetometerReader, didChangeState state: ConnectionState)
    func magnetometerReader(_ reader: MagnetometerReader, didFail error: MagnetometerError)
}

/// Reads a magnetometer at a fixed rate on its own thread: open the bus, find and identify the chip,
/// configure it, read on a deadline schedule. Read failures are reported; after `failuresBeforeReprobe`
/// in a row (or at once when nothing answers) the bus is closed and the chip found again, with backoff.
public final class MagnetometerReader: @unchecked Sendable { // `endpointLock` guards `currentEndpoint`; the rest lives on the worker thread
    public struct Configuration: Equatable, Sendable {
        public var bus: String = "/dev/i2c-1"
        /// A driver name; nil finds any supported chip.
        public var chip: String? = nil
        public var address: UInt8? = nil
        public var settings = MagnetometerSettings()
        public var retryInitial: Double = 0.5
        public var retryMax: Double = 30
        public var failuresBeforeReprobe = 3
        public init() {}
    }

    public let configuration: Configuration
    public weak var delegate: MagnetometerReaderDelegate?
    private let openBus: (String) throws(I2CError) -> I2CBus
    private let now: () -> GPSTimestamp
    private let worker = WorkerThread(name: "bearing.magnetometer")
    private let endpointLock = NSLock()
    private var currentEndpoint: String

    /// `i2c:BUS:ADDRESS` of the chip in use (or being looked for); read from any thread.
    public var endpoint: String {
        endpointLock.lock(); defer { endpointLock.unlock() }
        return currentEndpoint
    }

    public init(configuration: Configuration, openBus: @escaping (String) throws(I2CError) -> I2CBus,
                now: @escaping () -> GPSTimestamp) {
        self.configuration = configuration
        self.openBus = openBus
        self.now = now
        currentEndpoint = Self.endpoint(configuration.bus, configuration.address)
    }

    static func endpoint(_ bus: String, _ address: UInt8?) -> String {
        "i2c:\(bus)" + (address.map { ":\(I2CError.hex($0))" } ?? "")
    }

    public func start() {
        worker.start { [self] in run() }
    }

    /// When the reader entered the bus transfer it is in now (monotonic seconds); nil between reads.
    public var inCallSince: Double? { worker.inCallSince }

    /// Stops reading and waits for the thread (at most one sample period or backoff step).
    public func stop() {
        worker.stop()
    }

    private func report(_ s: ConnectionState) { delegate?.magnetometerReader(self, didChangeState: s) }
    private func fail(_ e: MagnetometerError) { delegate?.magnetometerReader(self, didFail: e) }

    private func run() {
        var attempt = 0
        var backoff = Backoff(initial: configuration.retryInitial, maximum: configuration.retryMax)
        while !worker.isStopping {
            attempt += 1
            report(.connecting(attempt: attempt))
            let reason: DisconnectReason
            do {
                let bus = try openBus(configuration.bus)
                let driver = try ChipProbe.find(bus, chip: configuration.chip, address: configuration.address)
                _ = try driver.configure(configuration.settings)
                let device = Self.endpoint(bus.path, driver.address)
                endpointLock.lock(); currentEndpoint = device; endpointLock.unlock()
                report(.connected)
                attempt = 0
                backoff.reset()
                reason = readLoop(driver, device: device)
            } catch let e as I2CError {
                fail(.bus(e))
                reason = .openFailed(e.description)
            } catch let e as MagnetometerError {
                fail(e)
                reason = .openFailed(e.description)
            } catch {
                reason = .error("\(error)")
            }
            if reason == .stopped { break }
            report(.disconnected(reason))
            if !worker.pause(backoff.delay()) { break }
        }
        report(.disconnected(.stopped))
    }

    /// Reads until stopped or the chip is lost; returns why it ended.
    private func readLoop(_ driver: any MagnetometerDriver, device: String) -> DisconnectReason {
        let period = 1 / max(0.01, configuration.settings.rate)
        let chip = type(of: driver).descriptor.name
        var next = Date()
        var failures = 0
        while true {
            if worker.isStopping { return .stopped }
            do {
                let r = try worker.blockingCall { () throws(MagnetometerError) in try driver.read() }
                failures = 0
                delegate?.magnetometerReader(self, didReceive: MagneticSample(
                    time: now(), device: device, chip: chip, field: r.field, overflow: r.overflow))
            } catch {
                fail(error)
                failures += 1
                if case .bus(let e) = error, e.isNoAnswer { return .error(error.description) }
                if failures >= configuration.failuresBeforeReprobe { return .error(error.description) }
            }
            next = max(next.addingTimeInterval(period), Date().addingTimeInterval(-period))
            if !worker.pause(until: next) { return .stopped }
        }
    }
}
