import BearingI2C
import BearingModel

/// `bearing probe --read`: one identified chip configured at a rate and read once, in chip axes.
public struct ProbeRead: CustomStringConvertible {
    public let chip: String
    public let address: UInt8
    /// The reading as one line, or why it failed.
    public let outcome: Result<String, Error>

    public var failed: Bool { if case .failure = outcome { return true } else { return false } }

    public var description: String {
        switch outcome {
        case .success(let text): return "read \(chip) \(I2CError.hex(address)): \(text)"
        case .failure(let error): return "read \(chip) \(I2CError.hex(address)): failed: \(error)"
        }
    }

    /// The magnetometer a scan found (nil: not a supported magnetometer).
    public static func magnetometer(_ f: ProbeFinding, bus: I2CBus, rate: Double) -> ProbeRead? {
        guard let chip = f.chip, let type = MagnetometerChips.driver(named: chip) else { return nil }
        let d = type.init(bus: bus, address: f.driverAddress ?? f.address)
        var s = MagnetometerSettings()
        s.rate = rate
        return ProbeRead(chip: chip, address: d.address, outcome: Result {
            try d.identify()
            let chosen = try d.configure(s)
            let r = try d.read()
            var extra = ""
            if let offset = (d as? MMC5983MA)?.bridgeOffset {
                extra = String(printf: " bridge offset x %.3f y %.3f z %.3f µT", offset.x, offset.y, offset.z)
            }
            return String(printf: "x %.3f y %.3f z %.3f µT |B| %.3f µT%@ (%@)%@", r.field.x, r.field.y, r.field.z, r.field.length,
                          r.overflow ? " OVERFLOW" : "", chosen.description, extra)
        })
    }

    /// The accelerometer/gyroscope a scan found (nil: none at that address).
    public static func inertial(_ f: ProbeFinding, bus: I2CBus, rate: Double) -> ProbeRead? {
        guard let chip = f.inertialChip, let type = InertialChips.driver(named: chip) else { return nil }
        let d = type.init(bus: bus, address: f.address)
        var s = InertialSettings()
        s.rate = rate
        return ProbeRead(chip: chip, address: d.address, outcome: Result {
            try d.identify()
            let chosen = try d.configure(s)
            let r = try d.read()
            let a = r.acceleration
            let gyro = r.angularRate.map { String(printf: " gyro x %.4f y %.4f z %.4f rad/s", $0.x, $0.y, $0.z) } ?? ""
            let temperature = r.temperature.map { String(printf: " temperature %.1f °C", $0) } ?? ""
            let flags = (r.accelerationSaturated ? " ACCEL SATURATED" : "") + (r.angularRateSaturated ? " GYRO SATURATED" : "")
            return String(printf: "accel x %.3f y %.3f z %.3f m/s² |a| %.3f%@%@%@ (%@)", a.x, a.y, a.z, a.length, gyro, temperature, flags,
                          chosen.description)
        })
    }
}
