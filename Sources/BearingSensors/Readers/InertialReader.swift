import BearingModel
import BearingI2C
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads an accelerometer + gyroscope at a fixed rate on its own thread, as `MagnetometerReader` reads a
/// magnetometer (the same `SensorReaderLoop`: find and identify the chip, configure it, read on a deadline
/// schedule, re-probe with backoff after repeated failures). Samples are in the chip's axes, m/s² and rad/s.
/// Unchecked Sendable: restates `SensorReader`'s (the compiler requires it); no state of its own.
public final class InertialReader: SensorReader<InertialSettings, InertialSample>, @unchecked Sendable {
    enum Kind: ReaderKind {
        static func find(_ bus: I2CBus, chip: String?, address: UInt8?) throws(SensorError) -> any InertialDriver {
            try ChipProbe.findInertial(bus, chip: chip, address: address)
        }
        static func configure(_ driver: any InertialDriver, _ settings: InertialSettings) throws(SensorError) {
            _ = try driver.configure(settings)
        }
        static func address(of driver: any InertialDriver) -> UInt8 { driver.address }
        static func read(_ driver: any InertialDriver, device: String, time: () -> GPSTimestamp) throws(SensorError) -> InertialSample {
            let r = try driver.read()
            return InertialSample(time: time(), device: device, chip: type(of: driver).descriptor.name, acceleration: r.acceleration,
                                  angularRate: r.angularRate, saturated: r.accelerationSaturated || r.angularRateSaturated, temperature: r.temperature)
        }
    }

    public init(configuration: Configuration, openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus,
                now: @escaping @Sendable () -> GPSTimestamp) {
        super.init(loop: SensorReaderLoop<Kind>(configuration: configuration, threadName: "bearing.imu", openBus: openBus, now: now))
    }
}
