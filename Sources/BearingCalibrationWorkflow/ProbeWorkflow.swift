import BearingI2C
import BearingSensors
import BearingSimulator

/// `bearing probe`: a bus scanned like i2cdetect, each answer identified by its ID registers, the config lines
/// for the first magnetometer and, with `read`, each identified chip configured and read once. Lines go to
/// `print`; the result is the exit status (0; 1 a read failed; 2 no supported chip at all).
public enum ProbeWorkflow {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func run(busPath path: String, read: Bool, rate: Double, print: (String) -> Void) throws(Failure) -> Int32 {
        let i2c: I2CBus
        do { i2c = try BusOpener.open(path) } catch { throw Failure(description: error.description) }
        let found: [ProbeFinding]
        do { found = try ChipProbe.scan(i2c) } catch { throw Failure(description: error.description) }
        print("bus \(path): \(found.count) address\(found.count == 1 ? "" : "es") answered (probe: quick write, read byte at 0x30-0x37 and 0x50-0x5f)")
        print("address  chip                                       confidence")
        func row(_ address: UInt8, _ chip: String, _ confidence: ChipDescriptor.Confidence?) {
            let column = chip + String(repeating: " ", count: max(0, 42 - chip.count))
            print("\(I2CError.hex(address))     \(column) \(confidence?.rawValue ?? "-")")
        }
        for f in found {
            if let imu = f.inertialDisplayName { row(f.address, imu, f.inertialConfidence) }
            if f.displayName != nil || f.inertialDisplayName == nil {
                row(f.address, f.displayName ?? (f.answer == .busy ? "(owned by a kernel driver: UU)" : "(unknown device)"), f.confidence)
            }
        }
        let chips = found.filter { $0.chip != nil }
        let inertial = found.filter { $0.inertialChip != nil }
        for f in inertial {
            print("# accelerometer/gyroscope: \(f.inertialDisplayName!) at \(I2CError.hex(f.address)) (driver \(f.inertialChip!))")
        }
        /// Configures and reads each identified accelerometer/gyroscope once; whether one failed.
        func readInertial() -> Bool {
            var failed = false
            for f in inertial { if let r = ProbeRead.inertial(f, bus: i2c, rate: rate) { print(r.description); failed = failed || r.failed } }
            return failed
        }
        guard let first = chips.first else {
            print("no supported magnetometer found; supported: \(MagnetometerChips.names.joined(separator: ", "))")
            if !inertial.isEmpty { print("# an accelerometer/gyroscope alone gives roll and pitch; a heading needs a magnetometer") }
            if read, readInertial() { return 1 }
            return inertial.isEmpty ? 2 : 0
        }
        print("\nconfig (/etc/bearing/bearing.yaml):")
        print("magnetometer:\n  bus: \(path)\n  chip: \(first.chip!)\n  address: \(I2CError.hex(first.driverAddress ?? first.address))")
        print("  orientation: \"+X+Y+Z\"   # board x forward, y right, z down from the chip's axes: docs/boards.md")
        if first.confidence == .low {
            print("# \(first.displayName!) has an ID an idle bus can also read: check the part number on the module")
        }
        guard read else { return 0 }
        var failed = false
        for f in chips { if let r = ProbeRead.magnetometer(f, bus: i2c, rate: rate) { print(r.description); failed = failed || r.failed } }
        if readInertial() { failed = true }
        return failed ? 1 : 0
    }
}
