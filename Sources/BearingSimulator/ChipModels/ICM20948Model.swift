import BearingCore

/// ICM-20948 (DS-000189) at the level the AK09916 driver needs: bank 0 WHO_AM_I 00h = 0xEA, REG_BANK_SEL 7Fh,
/// INT_PIN_CFG 0Fh whose BYPASS_EN (bit 1) connects the internal AK09916 to the host bus — unless the chip
/// sleeps (PWR_MGMT_1 06h bit 6, set at reset) or its I2C master (USER_CTRL 03h bit 5) holds the aux bus.
public final class ICM20948Model: RegisterChipModel {
    public let magnetometer: AK09916Model

    public init(magnetometer: AK09916Model) {
        self.magnetometer = magnetometer
        super.init(field: magnetometer.field)
        registers[0x00] = 0xEA
        registers[0x06] = 0x41
        magnetometer.host = self
    }

    var bypassOpen: Bool {
        registers[0x7F] == 0 && registers[0x0F] & 0x02 != 0 && registers[0x06] & 0x40 == 0 && registers[0x03] & 0x20 == 0
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
        let f = field()
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
