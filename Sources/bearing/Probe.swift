import ArgumentParser
import BearingSimulator
import BearingSensors
import BearingModel
import BearingI2C
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan an I2C bus like i2cdetect, identify magnetometers and accelerometer/gyroscopes by their ID registers, print config lines.")

    @Option(help: "The bus: /dev/i2c-N, a bus number, or simulator.") var bus: String = "/dev/i2c-1"
    @Flag(help: "Also configure each identified chip and read one sample (chip axes; µT, m/s², rad/s).") var read = false
    @Option(help: "With --read: samples per second to configure.") var rate: Double = 10

    func validate() throws {
        guard I2CBusName.path(bus) != nil else {
            throw ValidationError("--bus \(bus): expected a bus device such as /dev/i2c-1, a bus number, or simulator")
        }
    }

    func run() throws {
        let path = I2CBusName.path(bus)!
        let i2c: I2CBus
        do { i2c = try BusOpener.open(path) } catch { throw ProbeError(error.description) }
        let found: [ProbeFinding]
        do { found = try ChipProbe.scan(i2c) } catch { throw ProbeError(error.description) }
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
        guard let first = chips.first else {
            print("no supported magnetometer found; supported: \(MagnetometerChips.names.joined(separator: ", "))")
            if !inertial.isEmpty { print("# an accelerometer/gyroscope alone gives roll and pitch; a heading needs a magnetometer") }
            if read, readInertial(inertial, i2c) { throw ExitCode(1) }
            if inertial.isEmpty { throw ExitCode(2) }
            return
        }
        print("\nconfig (/etc/bearing/bearing.yaml):")
        print("magnetometer:\n  bus: \(path)\n  chip: \(first.chip!)\n  address: \(I2CError.hex(first.driverAddress ?? first.address))")
        print("  orientation: \"+X+Y+Z\"   # board x forward, y right, z down from the chip's axes: docs/boards.md")
        if first.confidence == .low {
            print("# \(first.displayName!) has an ID an idle bus can also read: check the part number on the module")
        }
        guard read else { return }
        var failed = false
        for f in chips { if let r = ProbeRead.magnetometer(f, bus: i2c, rate: rate) { print(r); failed = failed || r.failed } }
        if readInertial(inertial, i2c) { failed = true }
        if failed { throw ExitCode(1) }
    }

    /// Configures and reads each identified accelerometer/gyroscope once; returns whether one failed.
    func readInertial(_ found: [ProbeFinding], _ i2c: I2CBus) -> Bool {
        var failed = false
        for f in found { if let r = ProbeRead.inertial(f, bus: i2c, rate: rate) { print(r); failed = failed || r.failed } }
        return failed
    }
}

struct ProbeError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
