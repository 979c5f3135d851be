import BearingModel

/// ST LIS3MDL (3-axis, 16-bit, I2C 0x1C or 0x1E), e.g. on Adafruit's LIS3MDL breakout.
///
/// Source: ST LIS3MDL datasheet DocID024204 Rev 6: WHO_AM_I 0Fh = 0x3D, CTRL_REG1–5 20h–24h, STATUS 27h
/// (ZYXDA bit 3), OUT_X_L 28h…OUT_Z_H 2Dh little-endian, sensitivity 6842/3421/2281/1711 LSB/gauss at
/// ±4/8/12/16 G; multi-byte I2C reads need the sub-address MSB set (section 5.1.1), as Linux
/// `drivers/iio/common/st_sensors` does for it (`multi_read_bit`). The chip has no saturation flag:
/// an axis at ±32767/−32768 counts as overflow.
public final class LIS3MDL: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "lis3mdl", displayName: "ST LIS3MDL", addresses: [0x1C, 0x1E],
        idRegister: Register.whoAmI, idValue: [0x3D], confidence: .high,
        source: "ST LIS3MDL datasheet DocID024204; Linux iio/magnetometer/st_magn_core.c")

    enum Register {
        static let whoAmI: UInt8 = 0x0F
        static let ctrl1: UInt8 = 0x20
        static let ctrl2: UInt8 = 0x21
        static let ctrl3: UInt8 = 0x22
        static let ctrl4: UInt8 = 0x23
        static let ctrl5: UInt8 = 0x24
        static let status: UInt8 = 0x27
        static let outXL: UInt8 = 0x28
        static let autoIncrement: UInt8 = 0x80
    }

    static let rates = [0.625, 1.25, 2.5, 5, 10, 20, 40, 80]
    static let ranges: [(fullScale: Double, lsbPerMicrotesla: Double)] = [
        (400, 68.42), (800, 34.21), (1200, 22.81), (1600, 17.11),
    ]

    private var range = 0

    public func identify() throws(MagnetometerError) { try checkID() }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        let r = pick(Self.rates, atLeast: settings.rate)
        range = pickRange(Self.ranges.map(\.fullScale), settings.rangeMicrotesla, default: 0)
        rate = Self.rates[r]
        polls = settings.readyPolls
        try set(Register.ctrl1, 0b11 << 5 | UInt8(r) << 2)  // X/Y ultra-high performance, data rate
        try set(Register.ctrl2, UInt8(range) << 5)
        try set(Register.ctrl4, 0b11 << 2)                  // Z ultra-high performance, little-endian
        try set(Register.ctrl5, 0x40)                       // block data update
        try set(Register.ctrl3, 0x00)                       // continuous conversion
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.ranges[range].fullScale)
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        _ = try waitReady(Register.status, mask: 0x08, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.outXL | Register.autoIncrement, 6)
        let raw = [int16LE(b[0], b[1]), int16LE(b[2], b[3]), int16LE(b[4], b[5])]
        let k = Self.ranges[range].lsbPerMicrotesla
        return MagneticReading(field: Vector3(Double(raw[0]) / k, Double(raw[1]) / k, Double(raw[2]) / k),
                               overflow: raw.contains { $0 == 32767 || $0 == -32768 })
    }
}
