import BearingModel

/// AKM AK09916 (3-axis, 16-bit, I2C 0x0C), the magnetometer inside TDK's ICM-20948, reached by putting
/// the ICM-20948 (0x68/0x69) into I2C bypass so the AK09916 appears on the host bus.
///
/// Sources: AKM AK09916C datasheet: WIA1 00h = 0x48, WIA2 01h = 0x09, ST1 10h (DRDY bit 0), HXL 11h…HZH 16h
/// little-endian, ST2 18h (HOFL bit 3; reading it ends the measurement), CNTL2 31h modes 0x02/0x04/0x06/0x08
/// = 10/20/50/100 Hz, CNTL3 32h soft reset, 0.15 µT/LSB, ±4912 µT. TDK ICM-20948 datasheet DS-000189:
/// REG_BANK_SEL 7Fh, bank 0 WHO_AM_I 00h = 0xEA, USER_CTRL 03h (I2C_MST_EN bit 5), PWR_MGMT_1 06h,
/// INT_PIN_CFG 0Fh (BYPASS_EN bit 1). Linux `drivers/iio/magnetometer/ak8975.c` lists the AK09916 IDs.
public final class AK09916: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "ak09916", displayName: "AKM AK09916 (ICM-20948)", addresses: [0x0C],
        idRegister: Register.wia1, idValue: [0x48, 0x09], confidence: .high,
        source: "AKM AK09916C datasheet; TDK ICM-20948 datasheet DS-000189; Linux iio/magnetometer/ak8975.c")

    enum Register {
        static let wia1: UInt8 = 0x00
        static let st1: UInt8 = 0x10
        static let hxl: UInt8 = 0x11
        static let cntl2: UInt8 = 0x31
        static let cntl3: UInt8 = 0x32
    }

    /// The ICM-20948 host: its addresses and the registers that open the bypass.
    /// The ICM-20948 whose bypass the AK09916 sits behind (it powers up in bank 0; the drivers leave it there).
    public static let bypassHost = BypassHost(name: "TDK ICM-20948", addresses: [0x68, 0x69], whoAmI: 0x00,
                                              whoAmIValues: [0xEA], bankSelect: 0x7F, powerManagement1: 0x06,
                                              userControl: 0x03, intPinConfig: 0x0F)

    static let modes: [(rate: Double, mode: UInt8)] = [(10, 0x02), (20, 0x04), (50, 0x06), (100, 0x08)]
    static let microteslaPerLSB = 0.15
    static let fullScale = 4912.0

    /// The ICM-20948 whose bypass was opened, if any.
    public private(set) var host: UInt8?

    /// Opens the bypass of an ICM-20948 at `hostAddress` so the AK09916 answers at 0x0C (`openBypass(of:at:)`).
    public func openBypass(hostAddress: UInt8) throws(MagnetometerError) {
        try openBypass(of: Self.bypassHost, at: hostAddress)
        host = hostAddress
    }

    /// Checks WIA1/WIA2; when nothing answers at 0x0C, first opens the bypass of an ICM-20948 at 0x68 or 0x69.
    public func identify() throws(MagnetometerError) {
        try identifyBehindBypass(of: Self.bypassHost, open: openBypass(hostAddress:), check: checkID)
    }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        try requireRange(settings, within: Self.fullScale, described: "±4912 µT")
        let i = pick(Self.modes.map(\.rate), atLeast: settings.rate)
        rate = Self.modes[i].rate
        polls = settings.readyPolls
        try set(Register.cntl3, 0x01)   // soft reset
        sleep(0.001)
        try set(Register.cntl2, 0x00)   // power-down before a mode change
        try set(Register.cntl2, Self.modes[i].mode)
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.fullScale)
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        _ = try waitReady(Register.st1, mask: 0x01, polls: polls) { sleep(0.1 / rate) }
        // HXL…HZH, TMPS, ST2 in one transfer: ST2 must be read to release the data registers.
        let b = try block(Register.hxl, 8)
        let k = Self.microteslaPerLSB
        let field = Vector3(Double(int16LE(b[0], b[1])) * k, Double(int16LE(b[2], b[3])) * k, Double(int16LE(b[4], b[5])) * k)
        return MagneticReading(field: field, overflow: b[7] & 0x08 != 0)
    }
}
