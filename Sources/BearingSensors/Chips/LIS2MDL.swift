import BearingModel

/// ST LIS2MDL, and the magnetometer of the LSM303AGR (same register map), I2C 0x1E.
///
/// Source: ST LIS2MDL datasheet DocID027597 Rev 6 / LSM303AGR datasheet DocID027765: WHO_AM_I 4Fh = 0x40,
/// CFG_REG_A/B/C 60h–62h, STATUS 67h (Zyxda bit 3), OUTX_L 68h…OUTZ_H 6Dh little-endian with automatic
/// address increment, fixed sensitivity 1.5 mgauss/LSB (0.15 µT), ±49.152 G; Linux
/// `drivers/iio/magnetometer/st_magn_core.c` (lsm303agr_magn / lis2mdl). No saturation flag: an axis at
/// ±32767/−32768 counts as overflow.
///
/// Axes: the output registers form a left-handed frame (ST community: "LIS2MDL uses left-handed coordinate
/// system"; PX4's `lsm303agr` driver negates Z "to switch to right hand coordinate system"; Betaflight and
/// INAV "adapt LIS2MDL left-handed frame"). This driver negates Z, as PX4 does, so it reports a
/// right-handed frame with X and Y as the registers name them, the frame of the LSM303AGR's accelerometer.
/// Calibration files fitted before (without `"axes"`) are converted on load (`CalibrationRecord`).
public final class LIS2MDL: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "lis2mdl", displayName: "ST LIS2MDL / LSM303AGR", addresses: [0x1E],
        idRegister: Register.whoAmI, idValue: [0x40], confidence: .high,
        source: "ST LIS2MDL datasheet DocID027597; LSM303AGR datasheet; Linux iio/magnetometer/st_magn_core.c")

    enum Register {
        static let whoAmI: UInt8 = 0x4F
        static let cfgA: UInt8 = 0x60
        static let cfgB: UInt8 = 0x61
        static let cfgC: UInt8 = 0x62
        static let status: UInt8 = 0x67
        static let outXL: UInt8 = 0x68
    }

    static let rates = [10.0, 20, 50, 100]
    static let microteslaPerLSB = 0.15
    static let fullScale = 4915.2


    public func identify() throws(MagnetometerError) { try checkID() }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        try requireRange(settings, within: Self.fullScale, described: "fixed ±\(Self.fullScale) µT")
        let r = pick(Self.rates, atLeast: settings.rate)
        rate = Self.rates[r]
        polls = settings.readyPolls
        try set(Register.cfgA, 0x80 | UInt8(r) << 2)  // temperature compensation, data rate, continuous
        try set(Register.cfgB, 0x02 | 0x01)           // offset cancellation, low-pass filter
        try set(Register.cfgC, 0x10)                  // block data update
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.fullScale)
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        _ = try waitReady(Register.status, mask: 0x08, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.outXL, 6)
        let raw = [int16LE(b[0], b[1]), int16LE(b[2], b[3]), int16LE(b[4], b[5])]
        let k = Self.microteslaPerLSB
        return MagneticReading(field: Vector3(Double(raw[0]) * k, Double(raw[1]) * k, -Double(raw[2]) * k),
                               overflow: raw.contains { $0 == 32767 || $0 == -32768 })
    }
}
