
/// A motion chip whose I2C bypass puts its built-in magnetometer on the host's bus (ICM-20948 → AK09916,
/// MPU-9250/9255 → AK8963): where it answers, its ID and the registers that open the bypass.
public struct BypassHost: Sendable {
    public var name: String
    public var addresses: [UInt8]
    var whoAmI: UInt8
    var whoAmIValues: [UInt8]
    /// The register-bank select written first (the ICM-20948's), if the chip has banks.
    var bankSelect: UInt8?
    var powerManagement1: UInt8
    var userControl: UInt8
    var intPinConfig: UInt8
    var bypassEnable: UInt8 = 0x02
}

extension MagnetometerDriver {
    /// Opens `host`'s bypass at `address` so the magnetometer behind it answers. Reads WHO_AM_I before any
    /// write — 0x68/0x69 is also where RTCs (DS1307, DS3231) and other motion chips live — and throws
    /// `wrongChip` when `host` is not there; then wakes it, turns its I2C master off (freeing the auxiliary
    /// bus) and enables the bypass.
    func openBypass(of host: BypassHost, at address: UInt8) throws(MagnetometerError) {
        func hostSet(_ r: UInt8, _ v: UInt8) throws(MagnetometerError) {
            do { try bus.writeByte(address: address, register: r, value: v) } catch { throw .bus(error) }
        }
        let who: UInt8
        do { who = try bus.readByte(address: address, register: host.whoAmI) } catch { throw .bus(error) }
        guard host.whoAmIValues.contains(who) else {
            throw .wrongChip(chip: host.name, bus: bus.path, address: address, register: host.whoAmI,
                             found: [who], expected: host.whoAmIValues)
        }
        if let bankSelect = host.bankSelect { try hostSet(bankSelect, 0x00) }
        try hostSet(host.powerManagement1, 0x01)  // wake, automatic / gyro PLL clock
        sleep(0.01)
        try hostSet(host.userControl, 0x00)
        try hostSet(host.intPinConfig, host.bypassEnable)
        sleep(0.001)
    }

    /// Runs `check` (the magnetometer's ID check); when nothing answers, opens the bypass of each of
    /// `host`'s addresses in turn (`open`) and checks again. The error reported when none works is the
    /// most telling one: a host that answered with the wrong WHO_AM_I says more than one that did not answer.
    func identifyBehindBypass(of host: BypassHost, open: (UInt8) throws(MagnetometerError) -> Void,
                              check: () throws(MagnetometerError) -> Void) throws(MagnetometerError) {
        do {
            try check()
        } catch .bus(let e) where e.isNoAnswer {
            var reported = MagnetometerError.bus(e)
            for address in host.addresses {
                do {
                    try open(address)
                    try check()
                    return
                } catch {
                    if case .wrongChip = reported {} else { reported = error }
                }
            }
            throw reported
        }
    }
}
