import BearingModel

/// BMM150 at register level (BST-BMM150-DS001): chip ID 40h reads 0x32 only once power control 4Bh bit 0
/// is set (0x00 in suspend); normal mode when 4Ch bits 2:1 = 00; raw X/Y (13-bit), Z (15-bit) and RHALL
/// (14-bit, data-ready in bit 0) at 42h–49h, produced from the sensed field by inverting Bosch's
/// compensation with this part's trim registers (5Dh–71h); −4096/−16384 where an axis overflows.
public final class BMM150Model: RegisterChipModel {
    /// Trim values of a real part's kind (typical magnitudes from Bosch's API documentation).
    public struct Trim {
        public var x1: Int8 = 0, y1: Int8 = 0, x2: Int8 = 26, y2: Int8 = 26
        public var z1: UInt16 = 21_391, z2: Int16 = 763, z3: Int16 = 0, z4: Int16 = 0
        public var xy1: UInt8 = 29, xy2: Int8 = -3, xyz1: UInt16 = 7_170
        public init() {}
    }
    public var rhall = 7_000
    public let trim: Trim

    public init(trim: Trim = Trim(), field: @escaping () -> Vector3) {
        self.trim = trim
        super.init(field: field)
        registers[0x4C] = 0x06  // sleep
        registers[0x5D] = UInt8(bitPattern: trim.x1); registers[0x5E] = UInt8(bitPattern: trim.y1)
        putLE(0x62, Int(trim.z4))
        registers[0x64] = UInt8(bitPattern: trim.x2); registers[0x65] = UInt8(bitPattern: trim.y2)
        putLE(0x68, Int(trim.z2)); putLE(0x6A, Int(Int16(bitPattern: trim.z1)))
        putLE(0x6C, Int(Int16(bitPattern: trim.xyz1))); putLE(0x6E, Int(trim.z3))
        registers[0x70] = UInt8(bitPattern: trim.xy2); registers[0x71] = trim.xy1
    }

    var powered: Bool { registers[0x4B] & 0x01 != 0 }
    var normalMode: Bool { powered && registers[0x4C] & 0x06 == 0 }

    public override func willRead(_ r: UInt8) {
        if r == 0x40 { registers[0x40] = powered ? 0x32 : 0x00 }
        guard r == 0x42, normalMode, registers[0x48] & 0x01 == 0, conversionDone() else { return }
        let f = sensedField()
        let x = rawXY(f.x, d1: Double(trim.x1), d2: Double(trim.x2))
        let y = rawXY(f.y, d1: Double(trim.y1), d2: Double(trim.y2))
        let z = rawZ(f.z)
        putLE(0x42, x << 3); putLE(0x44, y << 3); putLE(0x46, z << 1)
        putLE(0x48, rhall << 2 | 1)
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x49 && registers[0x48] & 0x01 != 0 {
            setBit(0x48, 0x01, false)
            startConversion()
        }
    }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x4C && normalMode { startConversion() }
    }

    func rawXY(_ ut: Double, d1: Double, d2: Double) -> Int {
        let v = Double(trim.xyz1) * 16384 / Double(rhall) - 16384
        let s = Double(trim.xy2) * (v * v / 268_435_456) + v * Double(trim.xy1) / 256
        let raw = (ut * 16 - d1 * 8) * 8192 / ((s + 256) * (d2 + 160))
        let c = Self.clamp(raw, -4095, 4095)
        return c.clipped ? -4096 : c.value
    }

    func rawZ(_ ut: Double) -> Int {
        let den = (Double(trim.z2) + Double(trim.z1) * Double(rhall) / 32768) * 4
        let raw = (ut * 16 * den + Double(trim.z3) * Double(rhall - Int(trim.xyz1))) / 131_072 + Double(trim.z4)
        let c = Self.clamp(raw, -16383, 16383)
        return c.clipped ? -16384 : c.value
    }
}
