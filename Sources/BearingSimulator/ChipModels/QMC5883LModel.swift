import BearingModel

/// QMC5883L at register level (datasheet Rev 1.0): chip ID 0Dh = 0xFF; continuous when control 1 (09h)
/// bits 1:0 = 01; range bits 5:4 (12000 or 3000 LSB/G); X, Y, Z little-endian at 00h–05h; status 06h
/// DRDY bit 0 and OVL bit 1 (an axis clipped at ±32767), DRDY cleared once 05h has been read.
public final class QMC5883LModel: RegisterChipModel {
    public override init(field: @escaping () -> Vector3) {
        super.init(field: field)
        registers[0x0D] = 0xFF
    }

    var continuous: Bool { registers[0x09] & 0x03 == 0x01 }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x09 && continuous { startConversion() }
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x06, continuous, registers[0x06] & 0x01 == 0, conversionDone() else { return }
        let k = (registers[0x09] >> 4 & 0x03) == 0 ? 120.0 : 30.0
        let f = sensedField()
        let c = [f.x, f.y, f.z].map { Self.clamp($0 * k, -32768, 32767) }
        putLE(0x00, c[0].value); putLE(0x02, c[1].value); putLE(0x04, c[2].value)
        setBit(0x06, 0x02, c.contains { $0.clipped })
        setBit(0x06, 0x01, true)
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x05 && registers[0x06] & 0x01 != 0 {
            setBit(0x06, 0x01, false)
            startConversion()
        }
    }
}
