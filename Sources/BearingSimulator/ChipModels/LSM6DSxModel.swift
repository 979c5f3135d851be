
/// LSM6DS3 / LSM6DSL / LSM6DSOX at register level (ST DocID026899, DocID028475, DS12814): WHO_AM_I 0Fh =
/// 0x69 / 0x6A / 0x6C; CTRL1_XL 10h (ODR_XL 7:4, FS_XL 3:2 = ±2/±16/±4/±8 g at 0.061/0.488/0.122/0.244 mg/LSB),
/// CTRL2_G 11h (ODR_G 7:4, FS_G 3:2 = 245/500/1000/2000 °/s at 8.75/17.5/35/70 mdps/LSB, FS_125 bit 1 =
/// 4.375 mdps/LSB), CTRL3_C 12h (BDU bit 6, IF_INC bit 2 set at reset, SW_RESET bit 0), STATUS_REG 1Eh,
/// OUT_TEMP 20h (16 LSB/°C on the LSM6DS3, 256 on the others, 0 at 25 °C), gyro 22h–27h, accel 28h–2Dh.
public final class LSM6DSxModel: STInertialModel {
    public enum Variant: CaseIterable, Sendable {
        case lsm6ds3, lsm6dsl, lsm6dsox

        var id: UInt8 { [0x69, 0x6A, 0x6C][Variant.allCases.firstIndex(of: self)!] }
        var temperatureSensitivity: Double { self == .lsm6ds3 ? 16 : 256 }
    }

    public let variant: Variant

    public init(variant: Variant = .lsm6dsox, motion: @escaping () -> Motion) {
        self.variant = variant
        super.init(layout: Layout(whoAmI: 0x0F, status: [0x1E], temperature: 0x20, gyro: 0x22, accel: 0x28,
                                  control: 0x12, controlReset: 0x04, accelControl: 0x10, gyroControl: 0x11),
                   id: variant.id, temperatureSensitivity: variant.temperatureSensitivity, motion: motion)
    }

    static let milliGPerLSB: [Double] = [0.061, 0.488, 0.122, 0.244]
    static let milliDPSPerLSB: [Double] = [8.75, 17.5, 35, 70]

    public override var accelOn: Bool { registers[0x10] >> 4 != 0 }
    public override var gyroOn: Bool { registers[0x11] >> 4 != 0 }
    public override var accelScale: Double {
        Self.milliGPerLSB[Int(registers[0x10] >> 2 & 0x03)] / 1000 * Motion.standardGravity
    }
    public override var gyroScale: Double {
        let mdps = registers[0x11] & 0x02 != 0 ? 4.375 : Self.milliDPSPerLSB[Int(registers[0x11] >> 2 & 0x03)]
        return mdps / 1000 * .pi / 180
    }
}
