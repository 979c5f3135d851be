import BearingModel
import BearingI2C
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads a magnetometer at a fixed rate on its own thread (`SensorReaderLoop`): open the bus, find and
/// identify the chip, configure it, read on a deadline schedule. Read failures are reported; after
/// `failuresBeforeReprobe` in a row (or at once when nothing answers) the bus is closed and the chip found
/// again, with backoff.
/// Unchecked Sendable: restates `SensorReader`'s (the compiler requires it); no state of its own.
public final class MagnetometerReader: SensorReader<MagnetometerSettings, MagneticSample>, @unchecked Sendable {
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

    public init(configuration: Configuration, openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus,
                now: @escaping @Sendable () -> GPSTimestamp) {
        super.init(loop: SensorReaderLoop<Kind>(configuration: configuration, threadName: "bearing.magnetometer", openBus: openBus, now: now))
    }
}
