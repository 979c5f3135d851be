
/// TDK InvenSense ICM-20948 accelerometer + gyroscope (I2C 0x68 or 0x69), e.g. on Adafruit's, SparkFun's
/// and Pimoroni's ICM-20948 boards. Its magnetometer is the `ak09916` driver's; `configure` here leaves
/// USER_CTRL and INT_PIN_CFG (and so that bypass) alone, and leaves the chip in register bank 0.
///
/// Source: TDK ICM-20948 datasheet DS-000189 rev 1.3: REG_BANK_SEL 7Fh (USER_BANK bits 5:4). Bank 0:
/// WHO_AM_I 00h = 0xEA, PWR_MGMT_1 06h (SLEEP bit 6, set at reset; CLKSEL 1 = auto), PWR_MGMT_2 07h,
/// INT_ENABLE_1 11h (RAW_DATA_0_RDY_EN bit 0), INT_STATUS_1 1Ah (RAW_DATA_0_RDY_INT bit 0, cleared by
/// reading it), ACCEL_XOUT_H 2Dh…GYRO_ZOUT_L 38h, TEMP_OUT 39h–3Ah, big-endian (one 14-byte read). Bank 2:
/// GYRO_SMPLRT_DIV 00h (1.1 kHz / (1 + div)), GYRO_CONFIG_1 01h (GYRO_DLPFCFG bits 5:3, GYRO_FS_SEL bits 2:1
/// = ±250/500/1000/2000 °/s at 131/65.5/32.8/16.4 LSB/(°/s), GYRO_FCHOICE bit 0), ACCEL_SMPLRT_DIV_1/2
/// 10h–11h (1.125 kHz / (1 + div)), ACCEL_CONFIG 14h (ACCEL_DLPFCFG bits 5:3, ACCEL_FS_SEL bits 2:1 =
/// ±2/4/8/16 g at 16384/8192/4096/2048 LSB/g, ACCEL_FCHOICE bit 0). Temperature °C = raw / 333.87 + 21.
/// GYRO_DLPFCFG 1…6 = 151.8/119.5/51.2/23.9/11.6/5.7 Hz. Axes: +1 g on Z face up, rotation positive
/// counter-clockwise (datasheet "orientation of axes of sensitivity and polarity of rotation").
public final class ICM20948: ChipDriverBase, InertialDriver {
    public static let descriptor = ChipDescriptor(
        name: "icm20948", displayName: "TDK ICM-20948 (accel/gyro)", addresses: [0x68, 0x69],
        idRegister: Bank0.whoAmI, idValue: [0xEA], confidence: .high,
        source: "TDK ICM-20948 datasheet DS-000189")

    static let bankSelect: UInt8 = 0x7F
    enum Bank0 {
        static let whoAmI: UInt8 = 0x00
        static let powerManagement1: UInt8 = 0x06
        static let powerManagement2: UInt8 = 0x07
        static let intEnable1: UInt8 = 0x11
        static let intStatus1: UInt8 = 0x1A
        static let accelXOutH: UInt8 = 0x2D
    }
    enum Bank2 {
        static let gyroSampleRateDivider: UInt8 = 0x00
        static let gyroConfig1: UInt8 = 0x01
        static let accelSampleRateDivider1: UInt8 = 0x10
        static let accelSampleRateDivider2: UInt8 = 0x11
        static let accelConfig: UInt8 = 0x14
    }

    static let gyroInternalRate = 1100.0
    /// GYRO_DLPFCFG 1…6 and the gyro bandwidth each gives, Hz (the accelerometer's are within a few Hz).
    static let lowPass: [(config: UInt8, bandwidth: Double)] = [
        (1, 151.8), (2, 119.5), (3, 51.2), (4, 23.9), (5, 11.6), (6, 5.7),
    ]
    static let accelRanges: [(fullScale: Double, lsbPerG: Double)] = [(2, 16384), (4, 8192), (8, 4096), (16, 2048)]
    static let gyroRanges: [(fullScale: Double, lsbPerDPS: Double)] = [(250, 131), (500, 65.5), (1000, 32.8), (2000, 16.4)]

    private var accelScale = 0.0
    private var gyroScale = 0.0

    /// Reads WHO_AM_I without writing: the chip powers up in bank 0 and this driver leaves it there.
    public func identify() throws(SensorError) { try checkID() }

    private func selectBank(_ bank: UInt8) throws(SensorError) { try set(Self.bankSelect, bank << 4) }

    public func configure(_ settings: InertialSettings) throws(SensorError) -> InertialConfiguration {
        let rates = (0...255).reversed().map { Self.gyroInternalRate / Double(1 + $0) }
        let div = UInt8(255 - pick(rates, atLeast: settings.rate))
        rate = Self.gyroInternalRate / Double(1 + Int(div))
        polls = settings.readyPolls
        let a = pickRange(Self.accelRanges.map(\.fullScale), settings.accelerationRangeG, default: 1)
        let g = pickRange(Self.gyroRanges.map(\.fullScale), settings.angularRateRangeDPS, default: 1)
        let dlpf = (Self.lowPass.first { $0.bandwidth <= rate / 2 } ?? Self.lowPass[Self.lowPass.count - 1]).config
        try selectBank(0)
        try set(Bank0.powerManagement1, 0x01)   // awake, auto clock
        sleep(0.05)
        try set(Bank0.powerManagement2, 0x00)   // every axis on
        try selectBank(2)
        try set(Bank2.gyroSampleRateDivider, div)
        try set(Bank2.gyroConfig1, dlpf << 3 | UInt8(g) << 1 | 0x01)
        try set(Bank2.accelSampleRateDivider1, 0x00)
        try set(Bank2.accelSampleRateDivider2, div)
        try set(Bank2.accelConfig, dlpf << 3 | UInt8(a) << 1 | 0x01)
        try selectBank(0)
        try set(Bank0.intEnable1, 0x01)         // RAW_DATA_0_RDY_INT in INT_STATUS_1
        accelScale = Inertial.standardGravity / Self.accelRanges[a].lsbPerG
        gyroScale = Inertial.radiansPerDegree / Self.gyroRanges[g].lsbPerDPS
        return InertialConfiguration(rate: rate, accelerationRangeG: Self.accelRanges[a].fullScale,
                                     angularRateRangeDPS: Self.gyroRanges[g].fullScale)
    }

    public func read() throws(SensorError) -> InertialReading {
        _ = try waitReady(Bank0.intStatus1, mask: 0x01, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Bank0.accelXOutH, 14)
        let accel = Inertial.be(b, at: 0), gyro = Inertial.be(b, at: 6)
        return InertialReading(acceleration: Inertial.vector(accel, accelScale), angularRate: Inertial.vector(gyro, gyroScale),
                               accelerationSaturated: Inertial.saturated(accel), angularRateSaturated: Inertial.saturated(gyro),
                               temperature: Double(int16BE(b[12], b[13])) / 333.87 + 21)
    }
}
