import BearingCore
import BearingIO
import Foundation

/// Receives what a `MagnetometerReader` reads. All calls come on the reader's own thread, in order.
public protocol MagnetometerReaderDelegate: AnyObject {
    func magnetometerReader(_ reader: MagnetometerReader, didReceive sample: MagneticSample)
    func magnetometerReader(_ reader: MagnetometerReader, didChangeState state: ConnectionState)
    func magnetometerReader(_ reader: MagnetometerReader, didFail error: MagnetometerError)
}

/// Reads a magnetometer at a fixed rate on its own thread (`SensorReaderLoop`): open the bus, find and
/// identify the chip, configure it, read on a deadline schedule. Read failures are reported; after
/// `failuresBeforeReprobe` in a row (or at once when nothing answers) the bus is closed and the chip found
/// again, with backoff.
public final class MagnetometerReader: @unchecked Sendable { // the loop guards its own state; `delegate` is set before start()
    public typealias Configuration = SensorReaderConfiguration<MagnetometerSettings>

    public var configuration: Configuration { loop.configuration }
    public weak var delegate: MagnetometerReaderDelegate?
    private let loop: SensorReaderLoop<Kind>

    enum Kind: ReaderKind {
        static func find(_ bus: I2CBus, chip: String?, address: UInt8?) throws(SensorError) -> any MagnetometerDriver {
            try ChipProbe.find(bus, chip: chip, address: address)
        }
        static func configure(_ driver: any MagnetometerDriver, _ settings: MagnetometerSettings) throws(SensorError) {
            _ = try driver.configure(settings)
        }
        static func address(of driver: any MagnetometerDriver) -> UInt8 { driver.address }
        static func read(_ driver: any MagnetometerDriver, device: String, time: () -> GPSTimestamp) throws(SensorError) -> MagneticSample {
            let r = try driver.read()
            return MagneticSample(time: time(), device: device, chip: type(of: driver).descriptor.name, field: r.field, overflow: r.overflow)
        }
    }

    /// `i2c:BUS:ADDRESS` of the chip in use (or being looked for); read from any thread.
    public var endpoint: String { loop.endpoint }

    public init(configuration: Configuration, openBus: @escaping (String) throws(I2CError) -> I2CBus,
                now: @escaping () -> GPSTimestamp) {
        loop = SensorReaderLoop(configuration: configuration, threadName: "bearing.magnetometer", openBus: openBus, now: now)
    }

    public func start() {
        loop.start(.init(
            sample: { [weak self] s in if let self { self.delegate?.magnetometerReader(self, didReceive: s) } },
            state: { [weak self] s in if let self { self.delegate?.magnetometerReader(self, didChangeState: s) } },
            failure: { [weak self] e in if let self { self.delegate?.magnetometerReader(self, didFail: e) } }))
    }

    /// When the reader entered the bus transfer it is in now (monotonic seconds); nil between reads.
    public var inCallSince: Double? { loop.inCallSince }

    /// Stops reading and waits for the thread (at most one sample period or backoff step).
    public func stop() { loop.stop() }
}
