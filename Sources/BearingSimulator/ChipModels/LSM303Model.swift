import BearingPOSIX

/// LSM303DLHC / LSM303AGR accelerometer at register level (ST DocID018771, DocID027765): WHO_AM_I_A 0Fh =
/// 0x33 on both; CTRL_REG1_A 20h (ODR bits 7:4, 0 = power-down, the reset state; LPen bit 3; Z/Y/X enable
/// bits 2:0, set at reset); CTRL_REG4_A 23h (BDU bit 7, FS bits 5:4, HR bit 3); STATUS_REG_A 27h (XDA,
/// YDA, ZDA bits 2:0 and ZYXDA bit 3, set when a sample is latched and cleared once OUT_Z_H_A 2Dh has been
/// read); OUT_X_L_A 28h…OUT_Z_H_A 2Dh little-endian and left-justified: 12 bits in high-resolution mode (HR
/// set, LPen clear) at 1/2/4/12 (DLHC) or 0.98/1.95/3.9/11.72 (AGR) mg per digit at ±2/4/8/16 g, 10 bits
/// in normal mode and 8 in low-power mode at 4× and 16× those, clipped at the ends of the width. With BDU
/// clear every output read sees a fresh conversion. A multi-byte read auto-increments only when the
/// sub-address has bit 7 set; without it every byte comes from the same register. Only axes that are
/// enabled are converted (a disabled axis keeps its last value). The magnetometer is a separate I2C device
/// (`ChipModels.attachInertial` puts one at 0x1E for the named variants).
public final class LSM303Model: InertialChipModel {
    public enum Variant: Sendable {
        case dlhc, agr

        /// mg per 12-bit digit at FS 0…3.
        var milliGPerDigit: [Double] { self == .dlhc ? [1, 2, 4, 12] : [0.98, 1.95, 3.9, 11.72] }
    }

    public let variant: Variant

    public init(variant: Variant, motion: @escaping () -> Motion) {
        self.variant = variant
        super.init(motion: motion)
        registers[0x0F] = 0x33
        registers[0x20] = 0x07
    }

    var powered: Bool { registers[0x20] >> 4 != 0 }
    var lowPower: Bool { registers[0x20] & 0x08 != 0 }
    var blockDataUpdate: Bool { registers[0x23] & 0x80 != 0 }
    var highResolution: Bool { registers[0x23] & 0x08 != 0 }
    /// Output width: 8 bits in low-power mode, 12 in high-resolution, 10 otherwise.
    var bits: Int { lowPower ? 8 : highResolution ? 12 : 10 }

    public override func readBlock(_ register: UInt8, count: Int) -> [UInt8] {
        let start = register & 0x7F
        let increment = register & 0x80 != 0
        return (0..<count).map { read(increment ? start &+ UInt8($0) : start) }
    }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x20 || r == 0x23 { startConversion() }
    }

    public override func willRead(_ r: UInt8) {
        guard powered else { return }
        if r == 0x27, registers[0x27] & 0x08 == 0, conversionDone() {
            latch()
            registers[0x27] = 0x0F
        } else if (0x28...0x2D).contains(r), !blockDataUpdate {
            latch()
        }
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x2D && registers[0x27] & 0x08 != 0 {
            registers[0x27] = 0x00
            startConversion()
        }
    }

    /// Converts the specific force now into the enabled axes' output registers.
    func latch() {
        let fs = Int(registers[0x23] >> 4 & 0x03)
        let digit = variant.milliGPerDigit[fs] / 1000 * Motion.standardGravity * Double(1 << (12 - bits))
        let top = 1 << (bits - 1)
        let a = sensedMotion().specificForce
        for (axis, value) in [a.x, a.y, a.z].enumerated() where registers[0x20] & UInt8(1) << axis != 0 {
            let counts = Self.clamp(value / digit, -top, top - 1).value
            putLE(0x28 + UInt8(2 * axis), counts << (16 - bits))
        }
    }
}
