
/// ST LSM303DLHC and LSM303AGR accelerometer (no gyroscope) at I2C 0x19, e.g. on Adafruit's LSM303DLHC
/// (1120) and LSM303AGR (4413) breakouts. The magnetometer of each is a separate device at 0x1E: the
/// AGR's is the `lis2mdl` driver's chip; the DLHC's answers the HMC5883L's ID ("H43" at 0Ah–0Ch) with the
/// same data registers (X, Z, Y big-endian from 03h) and is read by the `hmc5883l` driver, but with the
/// DLHC's own gains (1100 LSB/G on X and Y, 980 on Z at ±1.3 G, against the HMC5883L's 1090; Linux
/// `drivers/iio/magnetometer/st_magn_core.c`): a calibration absorbs the difference.
///
/// Sources: ST LSM303DLHC datasheet DocID018771 and LSM303AGR datasheet DocID027765: CTRL_REG1_A 20h (ODR
/// bits 7:4 = 1/10/25/50/100/200/400 Hz for codes 1…7 and 1.344 kHz for code 9 in normal and
/// high-resolution mode; code 8 and 9's 5.376 kHz are low-power only and not used; LPen bit 3; Zen/Yen/Xen
/// bits 2:0), CTRL_REG2_A 21h (high-pass filter, bypassed here so the output keeps gravity), CTRL_REG4_A
/// 23h (BDU bit 7, BLE bit 6 = 0 little-endian, FS bits 5:4 = ±2/4/8/16 g, HR bit 3), STATUS_REG_A 27h
/// (ZYXDA bit 3, ZYXOR bit 7), OUT_X_L_A 28h…OUT_Z_H_A 2Dh little-endian, 12-bit left-justified in
/// high-resolution mode; a multi-byte read auto-increments only with the sub-address MSB set (28h|80h),
/// as Linux `drivers/iio/accel/st_accel_core.c` does for these parts (`multi_read_bit`). Sensitivity per
/// 12-bit digit in high-resolution mode: DLHC 1/2/4/12 mg at ±2/4/8/16 g (the same table in Linux
/// `st_accel_core.c` and ST's STM32F3-Discovery `lsm303dlhc.h`), AGR 0.98/1.95/3.9/11.72 mg (ST's
/// LSM303AGR drivers, Adafruit_LSM303_Accel).
///
/// Identification: WHO_AM_I_A 0Fh reads 0x33 on both. The AGR datasheet documents it; the DLHC's does not,
/// but ST's own STM32F3-Discovery driver (`I_AM_LMS303DLHC` = 0x33), Linux `st_accel_core.c` (LSM303DLHC
/// and LSM303AGR in the 0x33 group) and Adafruit_LSM303_Accel (which checks 0x33 for both boards) all read
/// 0x33 there. 0x33 is also the LIS3DH's and LIS2DH12's ID (register-compatible accelerometers that can sit
/// at 0x19), hence `medium` confidence. The two LSM303s are told apart by the magnetometer beside the
/// accelerometer at 0x1E (reads only): WHO_AM_I_M 4Fh = 0x40 means an AGR, "H43" at 0Ah–0Ch a DLHC;
/// neither leaves the chip reported as "LSM303DLHC/LSM303AGR" with the DLHC's sensitivities (Linux's,
/// within 2.4 % of the AGR's). No temperature: the DLHC's sensor is in its magnetometer, the AGR's
/// (OUT_TEMP_A 0Ch–0Dh) is relative, off by default and a second transfer. Axes: +1 g on Z face up.
public final class LSM303: ChipDriverBase, InertialDriver {
    public static let descriptor = ChipDescriptor(
        name: "lsm303", displayName: "ST LSM303DLHC/LSM303AGR (accelerometer)", addresses: [0x19],
        idRegister: Register.whoAmI, idValue: [0x33], confidence: .medium,
        source: "ST LSM303DLHC DocID018771, LSM303AGR DocID027765; Linux iio/accel/st_accel_core.c")

    enum Register {
        static let whoAmI: UInt8 = 0x0F
        static let ctrl1: UInt8 = 0x20
        static let ctrl2: UInt8 = 0x21
        static let ctrl4: UInt8 = 0x23
        static let status: UInt8 = 0x27
        static let outXL: UInt8 = 0x28
        /// Set in the sub-address of a multi-byte read for auto-increment.
        static let autoIncrement: UInt8 = 0x80
    }
    enum Control1 {
        /// Zen, Yen, Xen; LPen (bit 3) clear: normal or high-resolution mode.
        static let axesEnabled: UInt8 = 0x07
    }
    enum Control4 {
        static let blockDataUpdate: UInt8 = 0x80
        static let highResolution: UInt8 = 0x08
    }
    enum Status {
        static let zyxDataAvailable: UInt8 = 0x08
    }

    /// Which LSM303 the magnetometer beside the accelerometer says this is.
    public struct Variant: Equatable, Sendable {
        public var name: String
        /// mg per 12-bit digit at ±2/4/8/16 g in high-resolution mode.
        var milliGPerDigit: [Double]

        static let dlhc = Variant(name: "LSM303DLHC", milliGPerDigit: [1, 2, 4, 12])
        static let agr = Variant(name: "LSM303AGR", milliGPerDigit: [0.98, 1.95, 3.9, 11.72])
        /// No magnetometer answered at 0x1E: the DLHC's table, which Linux uses for both.
        static let either = Variant(name: "LSM303DLHC/LSM303AGR", milliGPerDigit: [1, 2, 4, 12])
    }

    /// The magnetometer of either LSM303 and what identifies it.
    enum Magnetometer {
        static let address: UInt8 = 0x1E
        static let agrWhoAmI: (register: UInt8, value: UInt8) = (0x4F, 0x40)
        static let dlhcID: (register: UInt8, value: [UInt8]) = (0x0A, Array("H43".utf8))
    }

    /// ODR codes of normal and high-resolution mode, Hz.
    static let rates: [(hz: Double, code: UInt8)] = [
        (1, 1), (10, 2), (25, 3), (50, 4), (100, 5), (200, 6), (400, 7), (1344, 9),
    ]
    /// FS codes 0…3.
    static let fullScales: [Double] = [2, 4, 8, 16]
    /// High-resolution output width.
    static let bits = 12

    public private(set) var variant: Variant?
    public var identifiedName: String { variant.map { "ST \($0.name) (accelerometer)" } ?? Self.descriptor.displayName }
    private var accelScale = 0.0

    /// Checks WHO_AM_I_A, then reads the magnetometer's ID at 0x1E to tell the DLHC from the AGR.
    public func identify() throws(SensorError) {
        try checkID()
        variant = companionVariant()
    }

    private func companionVariant() -> Variant {
        let m = Magnetometer.self
        if (try? bus.readByte(address: m.address, register: m.agrWhoAmI.register)) == m.agrWhoAmI.value { return .agr }
        let dlhc = m.dlhcID.value.indices.allSatisfy { i in
            (try? bus.readByte(address: m.address, register: m.dlhcID.register + UInt8(i))) == m.dlhcID.value[i]
        }
        return dlhc ? .dlhc : .either
    }

    public func configure(_ settings: InertialSettings) throws(SensorError) -> InertialConfiguration {
        if variant == nil { try identify() }
        let v = variant ?? .either
        let r = Self.rates[pick(Self.rates.map(\.hz), atLeast: settings.rate)]
        let fs = pickRange(Self.fullScales, settings.accelerationRangeG, default: 1)
        rate = r.hz
        polls = settings.readyPolls
        try set(Register.ctrl4, Control4.blockDataUpdate | UInt8(fs) << 4 | Control4.highResolution)
        try set(Register.ctrl2, 0x00)
        try set(Register.ctrl1, r.code << 4 | Control1.axesEnabled)
        accelScale = v.milliGPerDigit[fs] / 1000 * Inertial.standardGravity
        return InertialConfiguration(rate: rate, accelerationRangeG: Self.fullScales[fs], angularRateRangeDPS: nil)
    }

    public func read() throws(SensorError) -> InertialReading {
        _ = try waitReady(Register.status, mask: Status.zyxDataAvailable, polls: polls) { sleep(0.1 / rate) }
        let b = try block(Register.outXL | Register.autoIncrement, 6)
        let accel = Inertial.le(b, at: 0).shiftedRight(16 - Self.bits)
        return InertialReading(acceleration: Inertial.vector(accel, accelScale), angularRate: nil,
                               accelerationSaturated: Inertial.saturated(accel, bits: Self.bits),
                               angularRateSaturated: false, temperature: nil)
    }
}
