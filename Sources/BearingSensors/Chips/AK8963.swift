import BearingModel
import BearingI2C

/// AKM AK8963 (3-axis, 16-bit, I2C 0x0C), the magnetometer inside InvenSense's MPU-9250 and MPU-9255,
/// reached by putting the MPU (0x68/0x69) into I2C bypass so the AK8963 appears on the host bus.
///
/// Sources: AKM AK8963 datasheet (MS1356-E): WIA 00h = 0x48; ST1 02h (DRDY bit 0); HXL 03h…HZH 08h
/// little-endian; ST2 09h (HOFL bit 3; reading it ends the data read and lets the next measurement in);
/// CNTL1 0Ah (BIT bit 4 = 16-bit output, 0.15 µT/LSB; MODE 0x02 = continuous 1, 8 Hz; 0x06 = continuous 2,
/// 100 Hz; 0x0F = fuse ROM access; power-down (0x00) between modes); CNTL2 0Bh SRST; ASAX…ASAZ 10h–12h,
/// sensitivity adjustment H × ((ASA − 128) × 0.5 / 128 + 1); range ±4912 µT. Linux
/// `drivers/iio/magnetometer/ak8975.c` (AK8963 entry) scales by (ASA + 128) / 256, the same thing.
/// InvenSense RM-MPU-9250A-00: WHO_AM_I 75h = 0x71 (0x73 on the MPU-9255), USER_CTRL 6Ah (I2C_MST_EN bit 5),
/// PWR_MGMT_1 6Bh, INT_PIN_CFG 37h (BYPASS_EN bit 1).
/// The AK09916 (ICM-20948) also has WIA 0x48 at 00h; it has 0x09 at 01h (its WIA2), where the AK8963 has
/// INFO, a value AKM does not document: a chip reading 0x09 there is taken for an AK09916.
public final class AK8963: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "ak8963", displayName: "AKM AK8963 (MPU-9250)", addresses: [0x0C],
        idRegister: Register.wia, idValue: [0x48], confidence: .medium,
        source: "AKM AK8963 datasheet MS1356-E; InvenSense RM-MPU-9250A-00; Linux iio/magnetometer/ak8975.c")

    enum Register {
        static let wia: UInt8 = 0x00
        static let info: UInt8 = 0x01
        static let st1: UInt8 = 0x02
        static let hxl: UInt8 = 0x03
        static let cntl1: UInt8 = 0x0A
        static let cntl2: UInt8 = 0x0B
        static let asax: UInt8 = 0x10
    }
    enum Mode {
        static let powerDown: UInt8 = 0x00
        static let fuseROM: UInt8 = 0x0F
        static let sixteenBit: UInt8 = 0x10
    }

    /// The MPU-9250/9255 host: its addresses and the registers that open the bypass.
    /// The MPU-9250/9255 whose bypass the AK8963 sits behind.
    public static let bypassHost = BypassHost(name: "InvenSense MPU-9250/9255", addresses: [0x68, 0x69], whoAmI: 0x75,
                                              whoAmIValues: [0x71, 0x73], bankSelect: nil, powerManagement1: 0x6B,
                                              userControl: 0x6A, intPinConfig: 0x37)

    static let modes: [(rate: Double, mode: UInt8)] = [(8, 0x02), (100, 0x06)]
    static let microteslaPerLSB = 0.15
    static let fullScale = 4912.0
    /// The AK09916's WIA2, at the AK8963's INFO address.
    static let ak09916Signature: UInt8 = 0x09

    /// The MPU whose bypass was opened, if any.
    public private(set) var host: UInt8?
    /// Per-axis sensitivity adjustment from the fuse ROM (1 = nominal), read by `configure`.
    public private(set) var sensitivityAdjustment = Vector3(1, 1, 1)

    /// Opens the bypass of an MPU-9250/9255 at `hostAddress` so the AK8963 answers at 0x0C (`openBypass(of:at:)`).
    public func openBypass(hostAddress: UInt8) throws(MagnetometerError) {
        try openBypass(of: Self.bypassHost, at: hostAddress)
        host = hostAddress
    }

    /// Checks WIA (and that it is no AK09916); when nothing answers at 0x0C, first opens the bypass of an
    /// MPU-9250/9255 at 0x68 or 0x69.
    public func identify() throws(MagnetometerError) {
        try identifyBehindBypass(of: Self.bypassHost, open: openBypass(hostAddress:), check: checkAK8963)
    }

    private func checkAK8963() throws(MagnetometerError) {
        try checkID()
        let info = try reg(Register.info)
        if info == Self.ak09916Signature {
            throw .unsupported(chip: Self.descriptor.displayName,
                               "\(bus.path) \(I2CError.hex(address)): register 0x01 reads 0x09, an AK09916's WIA2 (ICM-20948): use chip ak09916")
        }
    }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        try requireRange(settings, within: Self.fullScale, described: "±4912 µT")
        let i = pick(Self.modes.map(\.rate), atLeast: settings.rate)
        rate = Self.modes[i].rate
        polls = settings.readyPolls
        try set(Register.cntl2, 0x01)   // soft reset
        sleep(0.001)
        try set(Register.cntl1, Mode.powerDown)
        sleep(0.0001)
        try set(Register.cntl1, Mode.fuseROM)
        sleep(0.0001)
        let asa = try block(Register.asax, 3).map { (Double($0) - 128) * 0.5 / 128 + 1 }
        sensitivityAdjustment = Vector3(asa[0], asa[1], asa[2])
        try set(Register.cntl1, Mode.powerDown)
        sleep(0.0001)
        try set(Register.cntl1, Mode.sixteenBit | Self.modes[i].mode)
        return DriverConfiguration(rate: rate, rangeMicrotesla: Self.fullScale)
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        _ = try waitReady(Register.st1, mask: 0x01, polls: polls) { sleep(0.1 / rate) }
        // HXL…HZH and ST2 in one transfer: ST2 must be read to release the data registers.
        let b = try block(Register.hxl, 7)
        let k = Self.microteslaPerLSB, adj = sensitivityAdjustment
        let field = Vector3(Double(int16LE(b[0], b[1])) * k * adj.x, Double(int16LE(b[2], b[3])) * k * adj.y,
                            Double(int16LE(b[4], b[5])) * k * adj.z)
        return MagneticReading(field: field, overflow: b[6] & 0x08 != 0)
    }
}
