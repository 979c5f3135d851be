import BearingModel

/// HMC5883L at register level (datasheet Rev E): ID "H43" at 0Ah–0Ch; continuous mode when mode 02h
/// bits 1:0 = 00; X, Z, Y big-endian at 03h–08h; −4096 on an axis beyond ±2048 counts; RDY (09h bit 0)
/// cleared once 08h has been read; the pointer rolls from 08h back to 03h and from 0Ch to 00h.
public final class HMC5883LModel: RegisterChipModel {
    static let lsbPerGauss = [1370.0, 1090, 820, 660, 440, 390, 330, 230]

    public override init(field: @escaping () -> Vector3) {
        super.init(field: field)
        registers[0x00] = 0x10
        registers[0x01] = 0x20
        registers[0x02] = 0x01
        registers[0x0A] = 0x48; registers[0x0B] = 0x34; registers[0x0C] = 0x33
    }

    var continuous: Bool { registers[0x02] & 0x03 == 0 }

    public override func next(after r: UInt8) -> UInt8 {
        switch r {
        case 0x08: return 0x03
        case 0x0C: return 0x00
        default: return r &+ 1
        }
    }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x02 && continuous { startConversion() }
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x09, continuous, registers[0x09] & 0x01 == 0, conversionDone() else { return }
        let k = Self.lsbPerGauss[Int(registers[0x01] >> 5)] / 100
        let f = sensedField()
        func counts(_ v: Double) -> Int {
            let c = Self.clamp(v * k, -2048, 2047)
            return c.clipped ? -4096 : c.value
        }
        putBE(0x03, counts(f.x)); putBE(0x05, counts(f.z)); putBE(0x07, counts(f.y))
        setBit(0x09, 0x01, true)
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x08 && registers[0x09] & 0x01 != 0 {
            setBit(0x09, 0x01, false)
            startConversion()
        }
    }
}
