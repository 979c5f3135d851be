import BearingModel

/// LIS2MDL / LSM303AGR magnetometer at register level (DocID027597): WHO_AM_I 4Fh = 0x40; continuous when
/// CFG_REG_A bits 1:0 = 00 (idle, 11, at reset); 1.5 mG/LSB little-endian at 68h–6Dh, clipped at ±32767;
/// Zyxda (67h bit 3) cleared once 6Dh has been read; linear auto-increment. The field is given in the
/// right-handed frame the driver reports; the registers hold it with Z negated, as the chip's left-handed
/// axes do.
public final class LIS2MDLModel: RegisterChipModel {
    public override init(field: @escaping () -> Vector3) {
        super.init(field: field)
        registers[0x4F] = 0x40
        registers[0x60] = 0x03
    }

    var continuous: Bool { registers[0x60] & 0x03 == 0 }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x60 && continuous { startConversion() }
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x67, continuous, registers[0x67] & 0x08 == 0, conversionDone() else { return }
        let f = sensedField()
        let c = [f.x, f.y, -f.z].map { Self.clamp($0 / 0.15, -32768, 32767).value }
        putLE(0x68, c[0]); putLE(0x6A, c[1]); putLE(0x6C, c[2])
        setBit(0x67, 0x08, true)
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x6D && registers[0x67] & 0x08 != 0 {
            setBit(0x67, 0x08, false)
            startConversion()
        }
    }
}
