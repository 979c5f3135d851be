import BearingModel

/// ST LSM9DS1 accelerometer + gyroscope (I2C 0x6A or 0x6B), e.g. on SparkFun's and Adafruit's LSM9DS1
/// boards and the BerryIMU v2. Its magnetometer is a separate device at 0x1C/0x1E with the LIS3MDL's
/// WHO_AM_I (0x3D) and register map: the `lis3mdl` magnetometer driver reads it.
///
/// Sources: ST LSM9DS1 datasheet DocID025715: WHO_AM_I 0Fh = 0x68; CTRL_REG1_G 10h (ODR_G bits 7:5 = 14.9,
/// 59.5, 119, 238, 476, 952 Hz; FS_G bits 4:3 = 00 ±245, 01 ±500, 11 ±2000 °/s at 8.75/17.5/70 mdps/LSB);
/// CTRL_REG6_XL 20h (ODR_XL bits 7:5; FS_XL bits 4:3 = 00 ±2 g, 01 ±16 g, 10 ±4 g, 11 ±8 g at 0.061/0.732/
/// 0.122/0.244 mg/LSB — ±16 g is 0.732, not 0.488); with the gyroscope on, both run at ODR_G; CTRL_REG8 22h
/// (BDU bit 6, IF_ADD_INC bit 2, SW_RESET bit 0); STATUS_REG 17h (XLDA bit 0, GDA bit 1, TDA bit 2);
/// OUT_TEMP 15h–16h (16 LSB/°C, 0 at 25 °C), OUT_X_G 18h–1Dh, OUT_X_XL 28h–2Dh little-endian. Gyro and
/// accel are not adjacent: one 25-byte auto-incremented read from 15h to 2Dh carries both (it passes over
/// CTRL_REG4…CTRL_REG10, INT_GEN_SRC_XL and a second STATUS_REG, none of which a read changes except the
/// unused, unlatched interrupt source). Tables as in Linux `drivers/iio/imu/st_lsm6dsx/st_lsm6dsx_core.c`
/// (LSM9DS1 entry).
///
/// Axes: the accelerometer/gyroscope's raw X, Y, Z form a left-handed frame, and its magnetometer's X
/// points the other way from the accelerometer's, Y and Z alike (PX4 `lsm9ds1_mag`: "sensor X is aligned
/// with -X of lsm9ds1 accel/gyro"; the LSM9DS1 AHRS sketches of J. Remington negate accel and gyro X "to
/// fix handedness" and then use the magnetometer as read; ArduPilot and RTIMULib apply one mirror map to
/// both). This driver reverses X of both, as those sketches do, so it reports — like every other driver —
/// a right-handed frame: the magnetometer's, and one orientation string serves both chips on a board.
public final class LSM9DS1: ChipDriverBase, InertialDriver {
    public static let descriptor = ChipDescriptor(
        name: "lsm9ds1", displayName: "ST LSM9DS1 (accel/gyro)", addresses: [0x6A, 0x6B],
        idRegister: Register.whoAmI, idValue: [0x68], confidence: .high,
        source: "ST LSM9DS1 datasheet DocID025715; Linux iio/imu/st_lsm6dsx/st_lsm6dsx_core.c")

    enum Register {
        static let whoAmI: UInt8 = 0x0F
        static let ctrl1G: UInt8 = 0x10
        static let outTempL: UInt8 = 0x15
        static let status: UInt8 = 0x17
        static let ctrl6XL: UInt8 = 0x20
        static let ctrl8: UInt8 = 0x22
    }
    enum Control8 {
        static let blockDataUpdate: UInt8 = 0x40
        static let autoIncrement: UInt8 = 0x04
        static let softwareReset: UInt8 = 0x01
    }

    /// ODR_G codes 1…6, Hz.
    static let rates = [14.9, 59.5, 119, 238, 476, 952]
    static let accelRanges: [(fullScale: Double, code: UInt8, milliGPerLSB: Double)] = [
        (2, 0b00, 0.061), (4, 0b10, 0.122), (8, 0b11, 0.244), (16, 0b01, 0.732),
    ]
    static let gyroRanges: [(fullScale: Double, code: UInt8, milliDPSPerLSB: Double)] = [
        (245, 0b00, 8.75), (500, 0b01, 17.5), (2000, 0b11, 70),
    ]
    /// Offsets in the 25-byte burst from OUT_TEMP_L.
    static let burstLength = 25
    static let gyroOffset = 3
    static let accelOffset = 0x28 - 0x15

    private var accelScale = 0.0
    private var gyroScale = 0.0

    public func identify() throws(SensorError) { try checkID() }

    public func configure(_ settings: InertialSettings) throws(SensorError) -> InertialConfiguration {
        let r = pick(Self.rates, atLeast: settings.rate)
        let a = Self.accelRanges[pickRange(Self.accelRanges.map(\.fullScale), settings.accelerationRangeG, default: 1)]
        let g = Self.gyroRanges[pickRange(Self.gyroRanges.map(\.fullScale), settings.angularRateRangeDPS, default: 1)]
        rate = Self.rates[r]
        polls = settings.readyPolls
        try set(Register.ctrl8, Control8.softwareReset | Control8.autoIncrement)
        sleep(0.01)
        try set(Register.ctrl8, Control8.blockDataUpdate | Control8.autoIncrement)
        let odr = UInt8(r + 1) << 5
        try set(Register.ctrl6XL, odr | a.code << 3)
        try set(Register.ctrl1G, odr | g.code << 3)
        accelScale = a.milliGPerLSB / 1000 * Inertial.standardGravity
        gyroScale = g.milliDPSPerLSB / 1000 * Inertial.radiansPerDegree
        return InertialConfiguration(rate: rate, accelerationRangeG: a.fullScale, angularRateRangeDPS: g.fullScale)
    }

    public func read() throws(SensorError) -> InertialReading {
        _ = try waitReady(Register.status, mask: 0x03, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.outTempL, Self.burstLength)
        let gyro = Inertial.le(b, at: Self.gyroOffset), accel = Inertial.le(b, at: Self.accelOffset)
        let a = Inertial.vector(accel, accelScale), g = Inertial.vector(gyro, gyroScale)
        return InertialReading(acceleration: Vector3(-a.x, a.y, a.z), angularRate: Vector3(-g.x, g.y, g.z),
                               accelerationSaturated: Inertial.saturated(accel), angularRateSaturated: Inertial.saturated(gyro),
                               temperature: 25 + Double(int16LE(b[0], b[1])) / 16)
    }
}
