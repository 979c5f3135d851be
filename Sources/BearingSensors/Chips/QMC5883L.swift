import BearingModel

/// QST QMC5883L (3-axis, 16-bit, I2C 0x0D), the chip on most "HMC5883L" modules sold since 2016.
///
/// Source: QST QMC5883L datasheet Rev 1.0 (2016): registers 00H–0DH (section 9.2), data X/Y/Z LSB first,
/// status DRDY/OVL/DOR, control 1 = OSR|RNG|ODR|MODE, SET/RESET period 0BH = 0x01 recommended,
/// chip ID 0DH = 0xFF; sensitivity 12000 LSB/G at ±2 G, 3000 LSB/G at ±8 G.
/// Its ID, 0xFF, is also what an idle bus reads, so `probe` gives it low confidence.
public final class QMC5883L: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "qmc5883l", displayName: "QST QMC5883L", addresses: [0x0D],
        idRegister: Register.chipID, idValue: [0xFF], confidence: .low,
        source: "QST QMC5883L datasheet Rev 1.0")

    enum Register {
        static let dataXLSB: UInt8 = 0x00
        static let status: UInt8 = 0x06
        static let control1: UInt8 = 0x09
        static let control2: UInt8 = 0x0A
        static let setResetPeriod: UInt8 = 0x0B
        static let chipID: UInt8 = 0x0D
    }

    static let rates = [10.0, 50, 100, 200]
    static let ranges: [(fullScale: Double, lsbPerMicrotesla: Double)] = [(200, 120), (800, 30)]

    private var range = 0

    public func identify() throws(MagnetometerError) { try checkID() }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        let r = pick(Self.rates, atLeast: settings.rate)
        range = pickRange(Self.ranges.map(\.fullScale), settings.rangeMicrotesla, default: 0)
        rate = Self.rates[r]
        polls = settings.readyPolls
        try set(Register.setResetPeriod, 0x01)
        try set(Register.control2, 0x00)   // interrupt pin on, no roll-over
        // OSR 512 (00), range, rate, continuous (01).
        try set(Register.control1, UInt8(range) << 4 | UInt8(r) << 2 | 0x01)
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.ranges[range].fullScale)
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        let status = try waitReady(Register.status, mask: 0x01, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.dataXLSB, 6)
        let k = Self.ranges[range].lsbPerMicrotesla
        let x = int16LE(b[0], b[1]), y = int16LE(b[2], b[3]), z = int16LE(b[4], b[5])
        return MagneticReading(field: Vector3(Double(x) / k, Double(y) / k, Double(z) / k),
                               overflow: status & 0x02 != 0)
    }
}
