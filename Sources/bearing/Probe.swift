import ArgumentParser
import BearingCalibrationWorkflow
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
        let status: Int32
        do { status = try ProbeWorkflow.run(busPath: I2CBusName.path(bus)!, read: read, rate: rate) { print($0) } } catch { throw ProbeError(error.description) }
        if status != 0 { throw ExitCode(status) }
    }
}

struct ProbeError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
