import BearingModel

/// Honeywell HMC5883L (3-axis, 12-bit, I2C 0x1E).
///
/// Source: Honeywell HMC5883L datasheet (Form #900405 Rev E): register map (table 2), CRA/CRB/mode
/// (tables 3–13), ID registers A–C = "H43", output order X, Z, Y big-endian, −4096 on overflow,
/// gains 1370…230 LSB/Gauss; the same map in Linux `drivers/iio/magnetometer/hmc5843_core.c`.
public final class HMC5883L: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "hmc5883l", displayName: "Honeywell HMC5883L", addresses: [0x1E],
        idRegister: Register.idA, idValue: Array("H43".utf8), confidence: .high,
        source: "Honeywell HMC5883L datasheet Rev E; Linux iio/magnetometer/hmc5843_core.c")

    enum Register {
        static let configA: UInt8 = 0x00
        static let configB: UInt8 = 0x01
        static let mode: UInt8 = 0x02
        static let dataXMSB: UInt8 = 0x03
        static let status: UInt8 = 0x09
        static let idA: UInt8 = 0x0A
    }

    /// Data output rates (CRA DO2..DO0 = index), Hz.
    static let rates = [0.75, 1.5, 3, 7.5, 15, 30, 75]
    /// Gain settings (CRB GN2..GN0 = index): full scale in µT and LSB per µT (LSB/Gauss ÷ 100).
    static let ranges: [(fullScale: Double, lsbPerMicrotesla: Double)] = [
        (88, 13.70), (130, 10.90), (190, 8.20), (250, 6.60), (400, 4.40), (470, 3.90), (560, 3.30), (810, 2.30),
    ]
    static let overflowValue = -4096

    private var gain = 1

    public func identify() throws(MagnetometerError) { try checkID() }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        let r = pick(Self.rates, atLeast: settings.rate)
        gain = pickRange(Self.ranges.map(\.fullScale), settings.rangeMicrotesla, default: 1)
        rate = Self.rates[r]
        polls = settings.readyPolls
        try set(Register.configA, 0b11 << 5 | UInt8(r) << 2)   // 8-sample average, normal measurement
        try set(Register.configB, UInt8(gain) << 5)
        try set(Register.mode, 0x00)                          // continuous
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.ranges[gain].fullScale)
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        _ = try waitReady(Register.status, mask: 0x01, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.dataXMSB, 6)
        let x = int16BE(b[0], b[1]), z = int16BE(b[2], b[3]), y = int16BE(b[4], b[5])
        let overflow = [x, y, z].contains(Self.overflowValue)
        let k = Self.ranges[gain].lsbPerMicrotesla
        return MagneticReading(field: Vector3(Double(x) / k, Double(y) / k, Double(z) / k), overflow: overflow)
    }
}
