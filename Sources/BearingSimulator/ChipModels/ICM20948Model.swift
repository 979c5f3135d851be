import BearingModel
import BearingPOSIX

/// ICM-20948 (DS-000189) at register level: four register banks selected by REG_BANK_SEL 7Fh (bits 5:4).
/// Bank 0: WHO_AM_I 00h = 0xEA; USER_CTRL 03h; PWR_MGMT_1 06h (0x41 at reset: asleep); INT_PIN_CFG 0Fh;
/// INT_ENABLE_1 11h; INT_STATUS_1 1Ah, whose RAW_DATA_0_RDY_INT (bit 0) is set when a sample is latched
/// (only with INT_ENABLE_1 bit 0) and cleared by reading it; accel, gyro, temperature big-endian at
/// 2Dh–3Ah. Bank 2: GYRO_CONFIG_1 01h and ACCEL_CONFIG 14h full scales in bits 2:1 (131/65.5/32.8/16.4 LSB
/// per °/s; 16384/8192/4096/2048 LSB/g), temperature raw = (°C − 21) × 333.87. INT_PIN_CFG BYPASS_EN (bit 1)
/// connects the internal AK09916 to the host bus — unless the chip sleeps or its I2C master (USER_CTRL
/// bit 5) holds the aux bus.
public final class ICM20948Model: InertialChipModel {
    public let magnetometer: AK09916Model
    /// Every register write with the bank it went to, in order.
    public private(set) var bankedWrites: [(bank: Int, register: UInt8, value: UInt8)] = []
    /// The banks not selected now; `registers` holds the selected one.
    private var banks = [[UInt8]](repeating: [UInt8](repeating: 0, count: 256), count: 4)
    public private(set) var bank = 0

    public init(magnetometer: AK09916Model, motion: @escaping () -> Motion = { .level }) {
        self.magnetometer = magnetometer
        super.init(motion: motion)
        registers[0x00] = 0xEA
        registers[0x05] = 0x40
        registers[0x06] = 0x41
        banks[2][0x01] = 0x01
        banks[2][0x14] = 0x01
        magnetometer.host = self
    }

    /// Register `r` of `bank`, whichever bank is selected.
    public func register(bank b: Int, _ r: UInt8) -> UInt8 { b == bank ? registers[Int(r)] : banks[b][Int(r)] }

    var awake: Bool { register(bank: 0, 0x06) & 0x40 == 0 }
    var bypassOpen: Bool {
        register(bank: 0, 0x0F) & 0x02 != 0 && awake && register(bank: 0, 0x03) & 0x20 == 0
    }
    static let lsbPerG: [Double] = [16384, 8192, 4096, 2048]
    static let lsbPerDPS: [Double] = [131, 65.5, 32.8, 16.4]

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        bankedWrites.append((bank, r, v))
        if r == 0x7F {
            let selected = Int(v >> 4 & 0x03)
            guard selected != bank else { return }
            banks[bank] = registers
            registers = banks[selected]
            registers[0x7F] = v
            bank = selected
        } else if bank == 0 && (r == 0x06 || r == 0x11) {
            startConversion()
        }
    }

    public override func willRead(_ r: UInt8) {
        guard bank == 0, r == 0x1A, awake, registers[0x11] & 0x01 != 0, registers[0x1A] & 0x01 == 0,
              conversionDone() else { return }
        let m = sensedMotion()
        let a = Self.lsbPerG[Int(banks[2][0x14] >> 1 & 0x03)] / Motion.standardGravity
        let g = Self.lsbPerDPS[Int(banks[2][0x01] >> 1 & 0x03)] * 180 / .pi
        putBE(0x2D, Self.counts(m.specificForce.x, 1 / a)); putBE(0x2F, Self.counts(m.specificForce.y, 1 / a))
        putBE(0x31, Self.counts(m.specificForce.z, 1 / a))
        putBE(0x33, Self.counts(m.angularRate.x, 1 / g)); putBE(0x35, Self.counts(m.angularRate.y, 1 / g))
        putBE(0x37, Self.counts(m.angularRate.z, 1 / g))
        putBE(0x39, Self.counts(m.temperature - 21, 1 / 333.87))
        setBit(0x1A, 0x01, true)
    }

    public override func didRead(_ r: UInt8) {
        if bank == 0 && r == 0x1A && registers[0x1A] & 0x01 != 0 {
            setBit(0x1A, 0x01, false)
            startConversion()
        }
    }
}

/// AK09916 at register level (AK09916C datasheet): WIA1/WIA2 = 0x48/0x09; continuous modes 02h/04h/06h/08h
/// in CNTL2 (31h); 0.15 µT/LSB little-endian at 11h–16h; ST1 (10h) DRDY bit 0; ST2 (18h) HOFL bit 3 when
/// |field| exceeds 4912 µT; reading ST2 releases the data and clears DRDY. Reachable only through an
/// ICM-20948's bypass when it has a host.
public final class AK09916Model: RegisterChipModel {
    weak var host: ICM20948Model?

    public override init(field: @escaping () -> Vector3) {
        super.init(field: field)
        registers[0x00] = 0x48
        registers[0x01] = 0x09
    }

    public override var isReachable: Bool { host.map(\.bypassOpen) ?? true }
    var continuous: Bool { [0x02, 0x04, 0x06, 0x08].contains(registers[0x31]) }

    public override func didWrite(_ r: UInt8, _ v: UInt8) {
        if r == 0x31 && continuous { startConversion() }
        if r == 0x32 && v & 0x01 != 0 { registers[0x31] = 0; registers[0x32] = 0 }
    }

    public override func willRead(_ r: UInt8) {
        guard r == 0x10, continuous, registers[0x10] & 0x01 == 0, conversionDone() else { return }
        let f = sensedField()
        let c = [f.x, f.y, f.z].map { Self.clamp($0 / 0.15, -32752, 32752) }
        putLE(0x11, c[0].value); putLE(0x13, c[1].value); putLE(0x15, c[2].value)
        registers[0x18] = c.contains { $0.clipped } ? 0x08 : 0x00
        setBit(0x10, 0x01, true)
    }

    public override func didRead(_ r: UInt8) {
        if r == 0x18 && registers[0x10] & 0x01 != 0 {
            setBit(0x10, 0x01, false)
            startConversion()
        }
    }
}
