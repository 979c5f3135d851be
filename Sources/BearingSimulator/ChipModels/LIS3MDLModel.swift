import BearingModel

/// LIS3MDL at register level (DocID024204): WHO_AM_I 0Fh = 0x3D; continuous when CTRL_REG3 bits 1:0 = 00;
/// full scale CTRL_REG2 bits 6:5 (6842/3421/2281/1711 LSB/G); X, Y, Z little-endian at 28h–2Dh, clipped
/// at ±32767; ZYXDA (27h bit 3) cleared once 2Dh has been read. A multi-byte read auto-increments only
/// when the sub-address has bit 7 set; without it every byte comes from the same register.
public final class LIS3MDLModel: RegisterChipModel {
    static let lsbPerGauss = [6842.0, 3421, 2281, 1711]

    public override init(field: @escaping () -> Vector3) {
        super.init(field: field)
        registers[0x0F] = 0x3D
        registers[0x22] = 0x03  // power-down at reset
    }

    var continuous: Bool { registers[0x22] & 0x03 == 0 }

    public override func readBlock(_ register: UInt8, count: Int) -> [UInt8] {
        let start = register & 0x7F
        let increment = register & 0x80 != 0
        return (0..<count).map { read(increment ? start &+ UInt8($0) : start) }
    }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x22 && continuous { startConversion() }
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x27, continuous, registers[0x27] & 0x08 == 0, conversionDone() else { return }
        let k = Self.lsbPerGauss[Int(registers[0x21] >> 5 & 0x03)] / 100
        let f = sensedField()
        let c = [f.x, f.y, f.z].map { Self.clamp($0 * k, -32768, 32767).value }
        putLE(0x28, c[0]); putLE(0x2A, c[1]); putLE(0x2C, c[2])
        setBit(0x27, 0x08, true)
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x2D && registers[0x27] & 0x08 != 0 {
            setBit(0x27, 0x08, false)
            startConversion()
        }
    }
}
