import BearingModel

/// MPU-6050 / MPU-6500 / MPU-9250 / MPU-9255 at register level (RM-MPU-6000A-00, RM-MPU-6500A-00,
/// RM-MPU-9250A-00): WHO_AM_I 75h = 0x68 / 0x70 / 0x71 / 0x73; PWR_MGMT_1 6Bh (reset 0x40, asleep, on the
/// MPU-6050; 0x01 on the others; DEVICE_RESET bit 7 restores every register); GYRO_CONFIG 1Bh and
/// ACCEL_CONFIG 1Ch full scales in bits 4:3 (131/65.5/32.8/16.4 LSB per °/s, 16384/8192/4096/2048 LSB/g);
/// accel, temperature, gyro big-endian at 3Bh–48h, latched together; INT_STATUS 3Ah DATA_RDY_INT (bit 0)
/// set only with INT_ENABLE 38h bit 0, cleared by reading INT_STATUS (or by any read with INT_RD_CLEAR,
/// INT_PIN_CFG bit 4). With INT_PIN_CFG BYPASS_EN (bit 1) set, the chip awake and its I2C master (USER_CTRL
/// 6Ah bit 5) off, an MPU-9250/9255's AK8963 answers on the host bus.
public final class MPU6xxxModel: InertialChipModel {
    public enum Variant: Sendable {
        case mpu6050, mpu6500, mpu9250, mpu9255

        var id: UInt8 {
            switch self {
            case .mpu6050: return 0x68
            case .mpu6500: return 0x70
            case .mpu9250: return 0x71
            case .mpu9255: return 0x73
            }
        }
        var powerManagementReset: UInt8 { self == .mpu6050 ? 0x40 : 0x01 }
        var temperature: (sensitivity: Double, offset: Double) { self == .mpu6050 ? (340, 36.53) : (333.87, 21) }
    }

    public let variant: Variant
    public let magnetometer: AK8963Model?

    public init(variant: Variant, magnetometer: AK8963Model? = nil, motion: @escaping () -> Motion) {
        self.variant = variant
        self.magnetometer = magnetometer
        super.init(motion: motion)
        resetRegisters()
        magnetometer?.host = self
    }

    func resetRegisters() {
        registers = [UInt8](repeating: 0, count: 256)
        registers[0x75] = variant.id
        registers[0x6B] = variant.powerManagementReset
    }

    var awake: Bool { registers[0x6B] & 0x40 == 0 }
    var bypassOpen: Bool { awake && registers[0x37] & 0x02 != 0 && registers[0x6A] & 0x20 == 0 }
    static let lsbPerG: [Double] = [16384, 8192, 4096, 2048]
    static let lsbPerDPS: [Double] = [131, 65.5, 32.8, 16.4]

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x6B && v & 0x80 != 0 { resetRegisters(); return }
        if r == 0x6B || r == 0x38 { startConversion() }
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x3A, awake, registers[0x38] & 0x01 != 0, registers[0x3A] & 0x01 == 0, conversionDone() else { return }
        let m = sensedMotion()
        let a = Self.lsbPerG[Int(registers[0x1C] >> 3 & 0x03)] / Motion.standardGravity
        let g = Self.lsbPerDPS[Int(registers[0x1B] >> 3 & 0x03)] * 180 / .pi
        putBE(0x3B, Self.counts(m.specificForce.x, 1 / a)); putBE(0x3D, Self.counts(m.specificForce.y, 1 / a))
        putBE(0x3F, Self.counts(m.specificForce.z, 1 / a))
        let t = variant.temperature
        putBE(0x41, Self.counts(m.temperature - t.offset, 1 / t.sensitivity))
        putBE(0x43, Self.counts(m.angularRate.x, 1 / g)); putBE(0x45, Self.counts(m.angularRate.y, 1 / g))
        putBE(0x47, Self.counts(m.angularRate.z, 1 / g))
        setBit(0x3A, 0x01, true)
    }

    public override func didRead(_ r: UInt8) {
        let anyReadClears = registers[0x37] & 0x10 != 0
        if (r == 0x3A || anyReadClears) && registers[0x3A] & 0x01 != 0 {
            setBit(0x3A, 0x01, false)
            startConversion()
        }
    }
}

/// AK8963 at register level (AKM AK8963 datasheet): WIA 00h = 0x48; ST1 02h DRDY bit 0; HXL 03h…HZH 08h
/// little-endian; ST2 09h (HOFL bit 3 when |X|+|Y|+|Z| ≥ 4912 µT, BITM bit 4 mirrors the output width);
/// CNTL1 0Ah (BIT bit 4: 16-bit 0.15 µT/LSB, else 14-bit 0.6 µT/LSB; MODE bits 3:0: 0x02 continuous 8 Hz,
/// 0x06 continuous 100 Hz, 0x0F fuse ROM access); CNTL2 0Bh SRST bit 0; ASAX…ASAZ 10h–12h readable only in
/// fuse ROM mode (0x00 otherwise). The sensed field is divided by (ASA + 128) / 256 the way the part's
/// sensitivity differs from nominal. Reading data or ST2 clears DRDY; only reading ST2 lets the next
/// measurement in. Reachable only through an MPU-9250's bypass when it has a host.
public final class AK8963Model: RegisterChipModel {
    weak var host: MPU6xxxModel?
    public let sensitivityAdjustment: [UInt8]
    /// A measurement is held until ST2 is read.
    var holding = false

    public init(sensitivityAdjustment: [UInt8] = [0xB0, 0xB3, 0xA7], field: @escaping () -> Vector3) {
        self.sensitivityAdjustment = sensitivityAdjustment
        super.init(field: field)
        registers[0x00] = 0x48
    }

    public override var isReachable: Bool { host.map(\.bypassOpen) ?? true }
    var mode: UInt8 { registers[0x0A] & 0x0F }
    var continuous: Bool { mode == 0x02 || mode == 0x06 }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x0A && continuous { startConversion() }
        if r == 0x0B && v & 0x01 != 0 {
            for i in 0x01..<0x20 { registers[i] = 0 }
            holding = false
        }
    }

    public override func willRead(_ r: UInt8) {
        if (0x10...0x12).contains(r) {
            registers[Int(r)] = mode == 0x0F ? sensitivityAdjustment[Int(r) - 0x10] : 0x00
        }
        guard r == 0x02, continuous, !holding, conversionDone() else { return }
        let sixteenBit = registers[0x0A] & 0x10 != 0
        let (k, limit) = sixteenBit ? (0.15, 32760) : (0.6, 8190)
        let f = sensedField()
        let axes = [f.x, f.y, f.z].enumerated().map { i, h in
            Self.clamp(h / (k * (Double(sensitivityAdjustment[i]) + 128) / 256), -limit, limit).value
        }
        putLE(0x03, axes[0]); putLE(0x05, axes[1]); putLE(0x07, axes[2])
        let overflow = abs(f.x) + abs(f.y) + abs(f.z) >= 4912
        registers[0x09] = (overflow ? 0x08 : 0) | (sixteenBit ? 0x10 : 0)
        setBit(0x02, 0x01, true)
        holding = true
    }

    public override func didRead(_ r: UInt8) {
        guard (0x03...0x09).contains(r) else { return }
        setBit(0x02, 0x01, false)
        if r == 0x09 && holding {
            holding = false
            startConversion()
        }
    }
}
