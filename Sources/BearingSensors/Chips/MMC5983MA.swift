import BearingModel

/// MEMSIC MMC5983MA (3-axis, 18-bit AMR, I2C 0x30), read on demand with SET/RESET offset removal.
///
/// Source: MEMSIC MMC5983MA datasheet Rev A: registers 00h–06h (X/Y/Z bits 17:2 then bits 1:0 in 06h),
/// status 08h (Meas_M_Done bit 0), internal control 0 09h (TM_M bit 0, SET bit 3, RESET bit 4),
/// control 1 0Ah (bandwidth bits 1:0), product ID 2Fh = 0x30; 18-bit output offset 131072, 16384 counts/gauss,
/// ±8 G. A SET pulse then a measurement gives H + offset; a RESET pulse flips the sensor so the next gives
/// −H + offset: half their difference is the field with the bridge offset (and its drift) removed.
public final class MMC5983MA: ChipDriverBase, MagnetometerDriver {
    public static let descriptor = ChipDescriptor(
        name: "mmc5983ma", displayName: "MEMSIC MMC5983MA", addresses: [0x30],
        idRegister: Register.productID, idValue: [0x30], confidence: .high,
        source: "MEMSIC MMC5983MA datasheet Rev A")

    enum Register {
        static let xOut0: UInt8 = 0x00
        static let status: UInt8 = 0x08
        static let control0: UInt8 = 0x09
        static let control1: UInt8 = 0x0A
        static let control2: UInt8 = 0x0B
        static let productID: UInt8 = 0x2F
    }
    enum Control0 {
        static let measureField: UInt8 = 0x01
        static let set: UInt8 = 0x08
        static let reset: UInt8 = 0x10
    }

    /// Bandwidth settings (control 1 BW = index): the highest on-demand rate each allows, Hz.
    static let rates = [100.0, 200, 400, 800]
    static let countsPerMicrotesla = 163.84
    static let nullValue = 131_072
    static let fullScale = 800.0

    /// When false, one plain measurement per sample (bridge offset not removed).
    public var setReset = true
    /// The bridge offset the last SET/RESET pair measured, µT.
    public private(set) var bridgeOffset: Vector3?
    private var conversionTime = 0.008

    public func identify() throws(MagnetometerError) { try checkID() }

    public func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration {
        try requireRange(settings, within: Self.fullScale, described: "±800 µT")
        // Each sample is two conversions (SET and RESET): pick a bandwidth fast enough for twice the rate.
        let bw = pick(Self.rates, atLeast: settings.rate * (setReset ? 2 : 1))
        conversionTime = 1 / Self.rates[bw]
        polls = settings.readyPolls
        try set(Register.control1, UInt8(bw))
        try set(Register.control2, 0x00)   // no continuous mode: measurements on demand
        return DriverConfiguration(rate: settings.rate, rangeMicrotesla: Self.fullScale)
    }

    private func measure() throws(MagnetometerError) -> (counts: [Int], overflow: Bool) {
        try set(Register.control0, Control0.measureField)
        sleep(conversionTime)
        _ = try waitReady(Register.status, mask: 0x01, polls: polls) { sleep(conversionTime / 10) }
        let b = try block(Register.xOut0, 7)
        let x = Int(b[0]) << 10 | Int(b[1]) << 2 | Int(b[6] >> 6 & 0x3)
        let y = Int(b[2]) << 10 | Int(b[3]) << 2 | Int(b[6] >> 4 & 0x3)
        let z = Int(b[4]) << 10 | Int(b[5]) << 2 | Int(b[6] >> 2 & 0x3)
        let counts = [x, y, z]
        return (counts, counts.contains { $0 == 0 || $0 == 0x3FFFF })
    }

    private static func microtesla(_ counts: [Int]) -> Vector3 {
        let v = counts.map { Double($0 - nullValue) / countsPerMicrotesla }
        return Vector3(v[0], v[1], v[2])
    }

    public func read() throws(MagnetometerError) -> MagneticReading {
        guard setReset else {
            let m = try measure()
            return MagneticReading(field: Self.microtesla(m.counts), overflow: m.overflow)
        }
        try set(Register.control0, Control0.set)
        sleep(0.0005)
        let a = try measure()
        try set(Register.control0, Control0.reset)
        sleep(0.0005)
        let b = try measure()
        let plus = Self.microtesla(a.counts), minus = Self.microtesla(b.counts)
        bridgeOffset = (plus + minus) / 2
        return MagneticReading(field: (plus - minus) / 2, overflow: a.overflow || b.overflow)
    }
}
