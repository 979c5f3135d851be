import BearingModel

/// Bosch BMM150 (3-axis, I2C 0x10–0x13), with its factory trim compensation.
///
/// Source: Bosch BMM150 datasheet BST-BMM150-DS001: chip ID 40h = 0x32 (readable once the power control
/// bit 4Bh.0 is set), data 42h–49h (X/Y 13-bit in bits 15:3, Z 15-bit in bits 15:1, RHALL 14-bit in
/// bits 15:2, data-ready 48h.0), op mode 4Ch, repetitions 51h/52h, trim registers 5Dh–71h, overflow
/// markers −4096 (X/Y) and −16384 (Z); the floating-point compensation of Bosch's BMM150 Sensor API
/// (`compensate_x/y/z`), which Linux `drivers/iio/magnetometer/bmc150_magn.c` does in integers.
public final class BMM150: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "bmm150", displayName: "Bosch BMM150", addresses: [0x10, 0x11, 0x12, 0x13],
        idRegister: Register.chipID, idValue: [0x32], confidence: .high,
        source: "Bosch BMM150 datasheet BST-BMM150-DS001; Bosch BMM150 Sensor API; Linux iio/magnetometer/bmc150_magn.c")

    enum Register {
        static let chipID: UInt8 = 0x40
        static let dataXLSB: UInt8 = 0x42
        static let powerControl: UInt8 = 0x4B
        static let opMode: UInt8 = 0x4C
        static let axes: UInt8 = 0x4E
        static let repXY: UInt8 = 0x51
        static let repZ: UInt8 = 0x52
        static let digX1: UInt8 = 0x5D
        static let digZ4: UInt8 = 0x62
        static let digX2: UInt8 = 0x64
        static let digZ2: UInt8 = 0x68
    }

    /// Op mode ODR field (bits 5:3) values and their rates.
    static let rates: [(rate: Double, code: UInt8)] = [(2, 1), (6, 2), (8, 3), (10, 0), (15, 4), (20, 5), (25, 6), (30, 7)]
    static let overflowXY = -4096
    static let overflowZ = -16384
    static let fullScale = 1300.0

    /// The factory trim values.
    struct Trim: Equatable {
        var x1 = 0.0, y1 = 0.0, x2 = 0.0, y2 = 0.0, xy1 = 0.0, xy2 = 0.0
        var z1 = 0.0, z2 = 0.0, z3 = 0.0, z4 = 0.0, xyz1 = 0.0
    }

    private(set) var trim = Trim()

    /// Powers the chip up from suspend (where its ID reads 0) and checks the ID.
    public func identify() throws(MagnetometerError) {
        try set(Register.powerControl, 0x01)
        sleep(0.003)
        try checkID()
    }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        try requireRange(settings, within: Self.fullScale, described: "±1300 µT (X/Y)")
        let sorted = Self.rates
        let i = pick(sorted.map(\.rate), atLeast: settings.rate)
        rate = sorted[i].rate
        polls = settings.readyPolls
        try set(Register.powerControl, 0x01)
        try set(Register.repXY, 4)        // "regular" preset: 9 repetitions
        try set(Register.repZ, 14)        // 15 repetitions
        try set(Register.axes, 0x00)      // all axes enabled
        try set(Register.opMode, sorted[i].code << 3)  // normal mode
        try readTrim()
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.fullScale)
    }

    func readTrim() throws(MagnetometerError) {
        let a = try block(Register.digX1, 2)   // 5D dig_x1, 5E dig_y1
        let z4 = try block(Register.digZ4, 4)  // 62-63 dig_z4, 64 dig_x2, 65 dig_y2
        let b = try block(Register.digZ2, 10)  // 68-69 z2, 6A-6B z1, 6C-6D xyz1, 6E-6F z3, 70 xy2, 71 xy1
        func s8(_ v: UInt8) -> Double { Double(Int8(bitPattern: v)) }
        trim = Trim(
            x1: s8(a[0]), y1: s8(a[1]), x2: s8(z4[2]), y2: s8(z4[3]),
            xy1: Double(b[9]), xy2: s8(b[8]),
            z1: Double(UInt16(b[3]) << 8 | UInt16(b[2])), z2: Double(int16LE(b[0], b[1])),
            z3: Double(int16LE(b[6], b[7])), z4: Double(int16LE(z4[0], z4[1])),
            xyz1: Double((UInt16(b[5]) << 8 | UInt16(b[4])) & 0x7FFF))
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        var b: [UInt8] = []
        for i in 0..<max(1, polls) {
            b = try block(Register.dataXLSB, 8)
            if b[6] & 0x01 != 0 { break }
            if i + 1 == polls {
                throw .dataNotReady(chip: Self.descriptor.displayName, bus: bus.path, address: address, polls: polls)
            }
            sleep(0.1 / rate)
        }
        let x = int16LE(b[0], b[1]) >> 3, y = int16LE(b[2], b[3]) >> 3, z = int16LE(b[4], b[5]) >> 1
        let rhall = Int(UInt16(b[7]) << 8 | UInt16(b[6])) >> 2
        let cx = Self.compensateXY(x, rhall: rhall, t: trim, d1: trim.x1, d2: trim.x2)
        let cy = Self.compensateXY(y, rhall: rhall, t: trim, d1: trim.y1, d2: trim.y2)
        let cz = Self.compensateZ(z, rhall: rhall, t: trim)
        let overflow = cx == nil || cy == nil || cz == nil
        return MagneticReading(field: Vector3(cx ?? 0, cy ?? 0, cz ?? 0), overflow: overflow)
    }

    /// Bosch's floating-point X/Y compensation; nil on overflow. µT.
    static func compensateXY(_ raw: Int, rhall: Int, t: Trim, d1: Double, d2: Double) -> Double? {
        guard raw != overflowXY else { return nil }
        let r0 = rhall != 0 ? Double(rhall) : t.xyz1
        guard r0 != 0 else { return nil }
        let v = t.xyz1 * 16384 / r0 - 16384
        let s = t.xy2 * (v * v / 268_435_456) + v * t.xy1 / 256
        return (Double(raw) * (s + 256) * (d2 + 160) / 8192 + d1 * 8) / 16
    }

    /// Bosch's floating-point Z compensation; nil on overflow. µT.
    static func compensateZ(_ raw: Int, rhall: Int, t: Trim) -> Double? {
        guard raw != overflowZ, t.z2 != 0, t.z1 != 0, t.xyz1 != 0, rhall != 0 else { return nil }
        let num = (Double(raw) - t.z4) * 131_072 - t.z3 * (Double(rhall) - t.xyz1)
        let den = (t.z2 + t.z1 * Double(rhall) / 32768) * 4
        return num / den / 16
    }
}
