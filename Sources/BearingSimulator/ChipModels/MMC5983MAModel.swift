import BearingModel

/// MMC5983MA at register level (datasheet Rev A): product ID 2Fh = 0x30; writing TM_M (09h bit 0) starts
/// a measurement whose result (18-bit, offset 131072, 16384 counts/G, clipped to 0…262143) appears at
/// 00h–06h with Meas_M_Done (08h bit 0). The sensing bridge has an offset, and its polarity follows the
/// last SET (09h bit 3) or RESET (bit 4) pulse: output = offset ± field.
public final class MMC5983MAModel: RegisterChipModel {
    /// The bridge offset the SET/RESET method removes, µT.
    public var bridgeOffset = Vector3(12.5, -7.25, 3.0)
    var polarity = 1.0
    var measuring = false

    public override init(field: @escaping () -> Vector3) {
        super.init(field: field)
        registers[0x2F] = 0x30
    }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        guard r == 0x09 else { return }
        if v & 0x08 != 0 { polarity = 1 }
        if v & 0x10 != 0 { polarity = -1 }
        if v & 0x01 != 0 {
            setBit(0x08, 0x01, false)
            measuring = true
            startConversion()
        }
        registers[0x09] = 0  // the control bits clear themselves
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x08, measuring, conversionDone() else { return }
        measuring = false
        let f = sensedField() * polarity + bridgeOffset
        let c = [f.x, f.y, f.z].map { Self.clamp(131_072 + $0 * 163.84, 0, 262_143).value }
        registers[0x00] = UInt8(c[0] >> 10 & 0xFF); registers[0x01] = UInt8(c[0] >> 2 & 0xFF)
        registers[0x02] = UInt8(c[1] >> 10 & 0xFF); registers[0x03] = UInt8(c[1] >> 2 & 0xFF)
        registers[0x04] = UInt8(c[2] >> 10 & 0xFF); registers[0x05] = UInt8(c[2] >> 2 & 0xFF)
        registers[0x06] = UInt8((c[0] & 3) << 6 | (c[1] & 3) << 4 | (c[2] & 3) << 2)
        setBit(0x08, 0x01, true)
    }
}
