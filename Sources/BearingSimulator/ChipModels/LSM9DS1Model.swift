
/// LSM9DS1 accelerometer/gyroscope at register level (ST DocID025715): WHO_AM_I 0Fh = 0x68; CTRL_REG1_G 10h
/// (ODR_G bits 7:5, FS_G bits 4:3 = 245/500/–/2000 °/s at 8.75/17.5/–/70 mdps/LSB); CTRL_REG6_XL 20h
/// (ODR_XL bits 7:5, FS_XL bits 4:3 = ±2/±16/±4/±8 g at 0.061/0.732/0.122/0.244 mg/LSB; with the gyroscope
/// on, the accelerometer runs at the gyroscope's rate); CTRL_REG8 22h (BDU bit 6, IF_ADD_INC bit 2 set at
/// reset, SW_RESET bit 0); STATUS_REG at both 17h and 27h; OUT_TEMP 15h (16 LSB/°C, 0 at 25 °C), gyro
/// 18h–1Dh, accel 28h–2Dh. Its magnetometer is a separate I2C device (use `LIS3MDLModel`). The motion is
/// given in the magnetometer's right-handed axes; the accelerometer and gyroscope output it with X reversed,
/// as the chip does (see `LSM9DS1`).
public final class LSM9DS1Model: STInertialModel {
    public init(motion: @escaping () -> Motion) {
        super.init(layout: Layout(whoAmI: 0x0F, status: [0x17, 0x27], temperature: 0x15, gyro: 0x18, accel: 0x28,
                                  control: 0x22, controlReset: 0x04, accelControl: 0x20, gyroControl: 0x10),
                   id: 0x68, temperatureSensitivity: 16, motion: motion)
        xReversed = true
    }

    override func resetRegisters() {
        super.resetRegisters()
        registers[0x1E] = 0x38  // CTRL_REG4: gyro axes on
        registers[0x1F] = 0x38  // CTRL_REG5_XL: accel axes on
    }

    static let milliGPerLSB: [Double] = [0.061, 0.732, 0.122, 0.244]
    static let milliDPSPerLSB: [Double] = [8.75, 17.5, .nan, 70]

    public override var gyroOn: Bool { registers[0x10] >> 5 != 0 }
    public override var accelOn: Bool { gyroOn || registers[0x20] >> 5 != 0 }
    public override var accelScale: Double {
        Self.milliGPerLSB[Int(registers[0x20] >> 3 & 0x03)] / 1000 * Motion.standardGravity
    }
    public override var gyroScale: Double { Self.milliDPSPerLSB[Int(registers[0x10] >> 3 & 0x03)] / 1000 * .pi / 180 }
}
