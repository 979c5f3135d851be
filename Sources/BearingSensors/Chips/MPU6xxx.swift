
/// InvenSense (TDK) MPU-6050 (and MPU-6000), MPU-6500, MPU-9250 and MPU-9255 accelerometer + gyroscope at
/// I2C 0x68 or 0x69 (AD0), e.g. the GY-521 and GY-9250 modules. The MPU-9250/9255's magnetometer is the
/// `ak8963` driver's, reached through this chip's I2C bypass; `configure` here leaves INT_PIN_CFG (and so
/// the bypass) alone.
///
/// Sources: InvenSense MPU-6000/6050 register map RM-MPU-6000A-00 rev 4.2 and product specification
/// PS-MPU-6000A-00; MPU-6500 register map RM-MPU-6500A-00; MPU-9250 register map RM-MPU-9250A-00:
/// WHO_AM_I 75h = 0x68 (MPU-6050/6000), 0x70 (MPU-6500), 0x71 (MPU-9250), 0x73 (MPU-9255); SMPLRT_DIV 19h
/// (rate = 1 kHz / (1 + div) with the low-pass filter on); CONFIG 1Ah DLPF_CFG bits 2:0 (1…6 = 188/98/42/
/// 20/10/5 Hz gyro bandwidth on the MPU-6050, 184/92/41/20/10/5 Hz on the MPU-6500/9250); GYRO_CONFIG 1Bh
/// FS_SEL bits 4:3 = ±250/500/1000/2000 °/s at 131/65.5/32.8/16.4 LSB/(°/s) (FCHOICE_B bits 1:0 = 00 on
/// the MPU-6500/9250); ACCEL_CONFIG 1Ch AFS_SEL bits 4:3 = ±2/4/8/16 g at 16384/8192/4096/2048 LSB/g;
/// ACCEL_CONFIG2 1Dh (MPU-6500/9250 only) A_DLPF_CFG bits 2:0; INT_PIN_CFG 37h; INT_ENABLE 38h DATA_RDY_EN
/// bit 0; INT_STATUS 3Ah DATA_RDY_INT bit 0, cleared by reading INT_STATUS; ACCEL_XOUT_H 3Bh…GYRO_ZOUT_L
/// 48h big-endian with TEMP_OUT at 41h, updated only while the bus is idle so one 14-byte burst is one
/// sampling instant; PWR_MGMT_1 6Bh (SLEEP bit 6, set at reset on the MPU-6050; CLKSEL 1 = gyro PLL /
/// auto); PWR_MGMT_2 6Ch. Temperature: MPU-6050 °C = raw / 340 + 36.53; MPU-6500/9250 °C = raw / 333.87
/// + 21 (the constants of Linux `drivers/iio/imu/inv_mpu6050/inv_mpu_iio.h`, whose core driver has the same
/// WHO_AM_I values and full-scale tables). Axes: +1 g on Z face up, rotation positive counter-clockwise
/// (product specification, "orientation of axes of sensitivity and polarity of rotation").
public final class MPU6xxx: ChipDriverBase, InertialDriver {
    public static let descriptor = ChipDescriptor(
        name: "mpu6xxx", displayName: "InvenSense MPU-6050/6500/9250", addresses: [0x68, 0x69],
        idRegister: Register.whoAmI, idValue: Variant.all.map(\.id), confidence: .high,
        source: "InvenSense RM-MPU-6000A-00, RM-MPU-6500A-00, RM-MPU-9250A-00; Linux iio/imu/inv_mpu6050")

    enum Register {
        static let sampleRateDivider: UInt8 = 0x19
        static let config: UInt8 = 0x1A
        static let gyroConfig: UInt8 = 0x1B
        static let accelConfig: UInt8 = 0x1C
        static let accelConfig2: UInt8 = 0x1D
        static let intEnable: UInt8 = 0x38
        static let intStatus: UInt8 = 0x3A
        static let accelXOutH: UInt8 = 0x3B
        static let powerManagement1: UInt8 = 0x6B
        static let powerManagement2: UInt8 = 0x6C
        static let whoAmI: UInt8 = 0x75
    }

    /// The family member WHO_AM_I says this is.
    public struct Variant: Equatable, Sendable {
        public var name: String
        public var id: UInt8
        /// MPU-6500 and later have ACCEL_CONFIG2 (the accelerometer's own low-pass filter).
        var hasAccelConfig2: Bool
        /// °C = raw / sensitivity + offset.
        var temperatureSensitivity: Double
        var temperatureOffset: Double

        static let all = [
            Variant(name: "MPU-6050", id: 0x68, hasAccelConfig2: false, temperatureSensitivity: 340, temperatureOffset: 36.53),
            Variant(name: "MPU-6500", id: 0x70, hasAccelConfig2: true, temperatureSensitivity: 333.87, temperatureOffset: 21),
            Variant(name: "MPU-9250", id: 0x71, hasAccelConfig2: true, temperatureSensitivity: 333.87, temperatureOffset: 21),
            Variant(name: "MPU-9255", id: 0x73, hasAccelConfig2: true, temperatureSensitivity: 333.87, temperatureOffset: 21),
        ]
    }

    static let internalRate = 1000.0
    /// DLPF_CFG 1…6 and the gyro bandwidth each gives (MPU-6050 figures), Hz.
    static let lowPass: [(config: UInt8, bandwidth: Double)] = [(1, 188), (2, 98), (3, 42), (4, 20), (5, 10), (6, 5)]
    static let accelRanges: [(fullScale: Double, lsbPerG: Double)] = [(2, 16384), (4, 8192), (8, 4096), (16, 2048)]
    static let gyroRanges: [(fullScale: Double, lsbPerDPS: Double)] = [(250, 131), (500, 65.5), (1000, 32.8), (2000, 16.4)]

    public private(set) var variant: Variant?
    public var identifiedName: String { variant.map { "InvenSense \($0.name)" } ?? Self.descriptor.displayName }
    private var accelScale = 0.0
    private var gyroScale = 0.0

    public func identify() throws(SensorError) {
        variant = try identifyMember(of: Variant.all) { $0.id }
    }

    /// The sample-rate divider giving the smallest rate ≥ `wanted` (1 kHz / (1 + divider)).
    static func divider(for wanted: Double) -> UInt8 {
        let rates = (0...255).reversed().map { internalRate / Double(1 + $0) }
        return UInt8(255 - pick(rates, atLeast: wanted))
    }

    /// The widest filter whose bandwidth is at most half the sample rate (the narrowest when none is).
    static func lowPassConfig(rate: Double) -> UInt8 {
        (lowPass.first { $0.bandwidth <= rate / 2 } ?? lowPass[lowPass.count - 1]).config
    }

    public func configure(_ settings: InertialSettings) throws(SensorError) -> InertialConfiguration {
        if variant == nil { try identify() }
        guard let v = variant else { throw .unsupported(chip: Self.descriptor.displayName, "not identified") }
        let div = Self.divider(for: settings.rate)
        rate = Self.internalRate / Double(1 + Int(div))
        polls = settings.readyPolls
        let a = pickRange(Self.accelRanges.map(\.fullScale), settings.accelerationRangeG, default: 1)
        let g = pickRange(Self.gyroRanges.map(\.fullScale), settings.angularRateRangeDPS, default: 1)
        let dlpf = Self.lowPassConfig(rate: rate)
        try set(Register.powerManagement1, 0x01)   // awake, gyro PLL clock
        sleep(0.05)
        try set(Register.powerManagement2, 0x00)   // every axis on
        try set(Register.config, dlpf)
        try set(Register.sampleRateDivider, div)
        try set(Register.gyroConfig, UInt8(g) << 3)
        try set(Register.accelConfig, UInt8(a) << 3)
        if v.hasAccelConfig2 { try set(Register.accelConfig2, dlpf) }
        try set(Register.intEnable, 0x01)          // DATA_RDY_INT in INT_STATUS
        accelScale = Inertial.standardGravity / Self.accelRanges[a].lsbPerG
        gyroScale = Inertial.radiansPerDegree / Self.gyroRanges[g].lsbPerDPS
        return InertialConfiguration(rate: rate, accelerationRangeG: Self.accelRanges[a].fullScale,
                                     angularRateRangeDPS: Self.gyroRanges[g].fullScale)
    }

    public func read() throws(SensorError) -> InertialReading {
        _ = try waitReady(Register.intStatus, mask: 0x01, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.accelXOutH, 14)
        let accel = Inertial.be(b, at: 0), gyro = Inertial.be(b, at: 8)
        let t = variant.map { Double(int16BE(b[6], b[7])) / $0.temperatureSensitivity + $0.temperatureOffset }
        return InertialReading(acceleration: Inertial.vector(accel, accelScale), angularRate: Inertial.vector(gyro, gyroScale),
                               accelerationSaturated: Inertial.saturated(accel), angularRateSaturated: Inertial.saturated(gyro),
                               temperature: t)
    }
}
