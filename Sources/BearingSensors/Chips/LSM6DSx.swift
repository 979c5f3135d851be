
/// ST LSM6DS3 (and LSM6DS33), LSM6DSL (and LSM6DS3TR-C) and LSM6DSO/LSM6DSOX 6-axis IMUs at I2C 0x6A or
/// 0x6B (SA0), e.g. on the BerryIMU v3 (LSM6DSL) and Adafruit's LSM6DSOX and LSM6DS33 boards.
///
/// Sources: ST datasheets LSM6DS3 DocID026899, LSM6DSL DocID028475, LSM6DSOX DS12814: WHO_AM_I 0Fh = 0x69 /
/// 0x6A / 0x6C (0x6C is also the LSM6DSO's); CTRL1_XL 10h (ODR_XL bits 7:4, FS_XL bits 3:2 = 00 ±2 g,
/// 01 ±16 g, 10 ±4 g, 11 ±8 g at 0.061/0.488/0.122/0.244 mg/LSB); CTRL2_G 11h (ODR_G bits 7:4, FS_G bits 3:2
/// = ±245/500/1000/2000 °/s at 8.75/17.5/35/70 mdps/LSB, FS_125 bit 1 = ±125 °/s at 4.375 mdps/LSB); ODR
/// codes 1…8 = 12.5…1666 Hz; CTRL3_C 12h (BDU bit 6, IF_INC bit 2, SW_RESET bit 0); STATUS_REG 1Eh (XLDA
/// bit 0, GDA bit 1, TDA bit 2); OUT_TEMP 20h–21h (16 LSB/°C on the LSM6DS3, 256 LSB/°C on the LSM6DSL and
/// LSM6DSOX, 0 at 25 °C), OUTX_L_G 22h…OUTZ_H_G 27h, OUTX_L_XL 28h…OUTZ_H_XL 2Dh, little-endian, read here
/// in one 14-byte auto-incremented transfer from 20h. The same IDs, ODR and full-scale tables are in
/// Linux `drivers/iio/imu/st_lsm6dsx/st_lsm6dsx_core.c`. Axes: +1 g on Z face up (datasheet figure
/// "accelerometer and gyroscope axes"), rotation positive counter-clockwise.
public final class LSM6DSx: ChipDriverBase, InertialDriver {
    public static let descriptor = ChipDescriptor(
        name: "lsm6dsx", displayName: "ST LSM6DS3/LSM6DSL/LSM6DSOX", addresses: [0x6A, 0x6B],
        idRegister: Register.whoAmI, idValue: Variant.all.map(\.id), confidence: .high,
        source: "ST LSM6DS3 DocID026899, LSM6DSL DocID028475, LSM6DSOX DS12814; Linux iio/imu/st_lsm6dsx/st_lsm6dsx_core.c")

    enum Register {
        static let whoAmI: UInt8 = 0x0F
        static let ctrl1XL: UInt8 = 0x10
        static let ctrl2G: UInt8 = 0x11
        static let ctrl3C: UInt8 = 0x12
        static let status: UInt8 = 0x1E
        static let outTempL: UInt8 = 0x20
    }
    enum Control3 {
        static let blockDataUpdate: UInt8 = 0x40
        static let autoIncrement: UInt8 = 0x04
        static let softwareReset: UInt8 = 0x01
    }

    /// The family member WHO_AM_I says this is.
    public struct Variant: Equatable, Sendable {
        public var name: String
        public var id: UInt8
        /// OUT_TEMP LSB per °C.
        var temperatureSensitivity: Double

        static let all = [
            Variant(name: "LSM6DS3", id: 0x69, temperatureSensitivity: 16),
            Variant(name: "LSM6DSL", id: 0x6A, temperatureSensitivity: 256),
            Variant(name: "LSM6DSOX", id: 0x6C, temperatureSensitivity: 256),
        ]
    }

    /// ODR codes 1…8 (the same for accelerometer and gyroscope), Hz.
    static let rates = [12.5, 26, 52, 104, 208, 416, 833, 1666]
    static let accelRanges: [(fullScale: Double, code: UInt8, milliGPerLSB: Double)] = [
        (2, 0b00, 0.061), (4, 0b10, 0.122), (8, 0b11, 0.244), (16, 0b01, 0.488),
    ]
    /// FS_125 is bit 1 of CTRL2_G; the others are FS_G (bits 3:2).
    static let gyroRanges: [(fullScale: Double, bits: UInt8, milliDPSPerLSB: Double)] = [
        (125, 0x02, 4.375), (245, 0b00 << 2, 8.75), (500, 0b01 << 2, 17.5), (1000, 0b10 << 2, 35), (2000, 0b11 << 2, 70),
    ]

    public private(set) var variant: Variant?
    public var identifiedName: String { variant.map { "ST \($0.name)" } ?? Self.descriptor.displayName }
    private var accelScale = 0.0
    private var gyroScale = 0.0

    public func identify() throws(SensorError) {
        variant = try identifyMember(of: Variant.all) { $0.id }
    }

    public func configure(_ settings: InertialSettings) throws(SensorError) -> InertialConfiguration {
        if variant == nil { try identify() }
        let r = pick(Self.rates, atLeast: settings.rate)
        let a = Self.accelRanges[pickRange(Self.accelRanges.map(\.fullScale), settings.accelerationRangeG, default: 1)]
        let g = Self.gyroRanges[pickRange(Self.gyroRanges.map(\.fullScale), settings.angularRateRangeDPS, default: 2)]
        rate = Self.rates[r]
        polls = settings.readyPolls
        try set(Register.ctrl3C, Control3.softwareReset | Control3.autoIncrement)
        sleep(0.01)
        try set(Register.ctrl3C, Control3.blockDataUpdate | Control3.autoIncrement)
        let odr = UInt8(r + 1) << 4
        try set(Register.ctrl1XL, odr | a.code << 2)
        try set(Register.ctrl2G, odr | g.bits)
        accelScale = a.milliGPerLSB / 1000 * Inertial.standardGravity
        gyroScale = g.milliDPSPerLSB / 1000 * Inertial.radiansPerDegree
        return InertialConfiguration(rate: rate, accelerationRangeG: a.fullScale, angularRateRangeDPS: g.fullScale)
    }

    public func read() throws(SensorError) -> InertialReading {
        _ = try waitReady(Register.status, mask: 0x03, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.outTempL, 14)
        let gyro = Inertial.le(b, at: 2), accel = Inertial.le(b, at: 8)
        let t = variant.map { 25 + Double(int16LE(b[0], b[1])) / $0.temperatureSensitivity }
        return InertialReading(acceleration: Inertial.vector(accel, accelScale), angularRate: Inertial.vector(gyro, gyroScale),
                               accelerationSaturated: Inertial.saturated(accel), angularRateSaturated: Inertial.saturated(gyro),
                               temperature: t)
    }
}
