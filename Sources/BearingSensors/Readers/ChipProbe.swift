import BearingI2C

/// One address that answered a scan, and what it was identified as.
public struct ProbeFinding: Equatable, Sendable {
    public var address: UInt8
    public var answer: I2CProbeResult
    /// The driver name of the identified magnetometer, nil when none.
    public var chip: String?
    public var displayName: String?
    public var confidence: ChipDescriptor.Confidence?
    /// The address the driver uses (0x0C for an AK09916 found through its ICM-20948 host).
    public var driverAddress: UInt8?
    public var note: String?
    /// The driver name of the identified accelerometer + gyroscope, nil when none.
    public var inertialChip: String?
    /// The chip as identified, e.g. "ST LSM6DSL" for the `lsm6dsx` family driver.
    public var inertialDisplayName: String?
    public var inertialConfidence: ChipDescriptor.Confidence?
}

/// Finding chips: an i2cdetect-style scan with ID-register identification, and the search the reader
/// does for a configured (or `auto`) chip.
public enum ChipProbe {
    /// Scans `range` the way i2cdetect does, then reads the ID registers of each chip that can live at
    /// each answering address. Only BMM150 candidates are written to (its ID needs power-on), and only
    /// at 0x10–0x13; an ICM-20948 or MPU-9250 is identified by WHO_AM_I without opening its bypass.
    /// Magnetometers and accelerometer/gyroscopes are identified independently: an ICM-20948 at 0x68
    /// gives both.
    public static func scan(_ bus: I2CBus, range: ClosedRange<UInt8> = I2CProbeMethod.scanRange) throws(I2CError) -> [ProbeFinding] {
        var out: [ProbeFinding] = []
        for address in range {
            let answer = try bus.probe(address: address)
            guard answer != .absent else { continue }
            var f = ProbeFinding(address: address, answer: answer)
            if answer == .busy {
                f.note = "owned by a kernel driver"
                out.append(f)
                continue
            }
            if let type = identify(bus, address: address) {
                let d = type.descriptor
                f.chip = d.name; f.displayName = d.displayName; f.confidence = d.confidence; f.driverAddress = address
            } else if AK8963.bypassHost.addresses.contains(address), let host = mpu9250(bus, address) {
                f.chip = AK8963.descriptor.name; f.displayName = "InvenSense \(host) (AK8963 via bypass at 0x0c)"
                f.confidence = .high; f.driverAddress = 0x0C
            } else if AK09916.bypassHost.addresses.contains(address), isICM20948(bus, address) {
                let d = AK09916.descriptor
                f.chip = d.name; f.displayName = "TDK ICM-20948 (AK09916 via bypass at 0x0c)"
                f.confidence = .high; f.driverAddress = 0x0C
            }
            if let d = identifyInertial(bus, address: address) {
                let descriptor = type(of: d).descriptor
                f.inertialChip = descriptor.name; f.inertialDisplayName = d.identifiedName
                f.inertialConfidence = descriptor.confidence
            }
            out.append(f)
        }
        // The LSM9DS1's magnetometer answers like a LIS3MDL (same WHO_AM_I and register map).
        if out.contains(where: { $0.inertialChip == LSM9DS1.descriptor.name }) {
            for i in out.indices where out[i].chip == LIS3MDL.descriptor.name {
                out[i].displayName = "ST LIS3MDL (or the LSM9DS1's magnetometer)"
            }
        }
        // The LSM303DLHC's magnetometer answers like an HMC5883L (same ID and data registers, other gains).
        if out.contains(where: { $0.inertialChip == LSM303.descriptor.name }) {
            for i in out.indices where out[i].chip == HMC5883L.descriptor.name {
                out[i].displayName = "Honeywell HMC5883L (or the LSM303DLHC's magnetometer)"
            }
        }
        return out
    }

    static func isICM20948(_ bus: I2CBus, _ address: UInt8) -> Bool {
        (try? bus.readByte(address: address, register: 0x00)) == 0xEA
    }

    /// The MPU-9250/9255 at `address` (by WHO_AM_I), if that is what is there.
    static func mpu9250(_ bus: I2CBus, _ address: UInt8) -> String? {
        guard let who = try? bus.readByte(address: address, register: 0x75) else { return nil }
        return who == 0x71 ? "MPU-9250" : who == 0x73 ? "MPU-9255" : nil
    }

    /// The first supported magnetometer whose ID registers match at `address`.
    public static func identify(_ bus: I2CBus, address: UInt8) -> (any MagnetometerDriver.Type)? {
        firstIdentified(bus, Candidates.magnetometers, address: address).map { type(of: $0) }
    }

    /// The first supported accelerometer + gyroscope whose ID registers match at `address`, identified.
    public static func identifyInertial(_ bus: I2CBus, address: UInt8) -> (any InertialDriver)? {
        firstIdentified(bus, Candidates.inertial, address: address)
    }

    private static func firstIdentified<T>(_ bus: I2CBus, _ candidates: [Candidate<T>], address: UInt8) -> T? {
        for c in candidates where c.descriptor.addresses.contains(address) {
            let d = c.make(bus, address)
            if (try? d.chip.identify()) != nil { return d.typed }
        }
        return nil
    }

    /// The magnetometer driver for `chip` (a name, or nil for any supported chip) at `address` (nil: each
    /// address the chip can have), identified. Errors say what was tried.
    public static func find(_ bus: I2CBus, chip: String?, address: UInt8?) throws(MagnetometerError) -> any MagnetometerDriver {
        try find(bus, Candidates.magnetometers, kind: "magnetometer", chip: chip, address: address)
    }

    /// The accelerometer + gyroscope driver for `chip` (a name, or nil for any supported chip) at
    /// `address` (nil: each address the chip can have), identified.
    public static func findInertial(_ bus: I2CBus, chip: String?, address: UInt8?) throws(SensorError) -> any InertialDriver {
        try find(bus, Candidates.inertial, kind: "accelerometer/gyroscope", chip: chip, address: address)
    }

    private static func find<T>(_ bus: I2CBus, _ all: [Candidate<T>], kind: String, chip: String?,
                                address: UInt8?) throws(SensorError) -> T {
        let types: [Candidate<T>]
        if let chip {
            guard let t = all.first(where: { $0.descriptor.name == chip.lowercased() }) else {
                let names = all.map(\.descriptor.name).joined(separator: ", ")
                throw .unsupported(chip: chip, "unknown chip; supported: \(names)")
            }
            types = [t]
        } else {
            types = all
        }
        var lastError: SensorError?
        for type in types {
            for a in address.map({ [$0] }) ?? type.descriptor.addresses {
                let d = type.make(bus, a)
                do {
                    try d.chip.identify()
                    return d.typed
                } catch {
                    lastError = error
                }
            }
        }
        if chip == nil, address == nil {
            throw .unsupported(chip: "auto", "no supported \(kind) found on \(bus.path) (run `bearing probe --bus \(bus.path)`)")
        }
        throw lastError ?? .unsupported(chip: chip ?? "auto", "nothing to try")
    }
}

/// A driver type as `ChipProbe` walks it: its descriptor and a way to make one, both as a `ChipDriver`
/// (to identify it) and as its registry's existential (`any MagnetometerDriver`, `any InertialDriver`).
struct Candidate<T> {
    let descriptor: ChipDescriptor
    let make: (I2CBus, UInt8) -> (chip: any ChipDriver, typed: T)
}

/// The registries as `Candidate`s.
enum Candidates {
    static var magnetometers: [Candidate<any MagnetometerDriver>] {
        MagnetometerChips.all.map { t in
            Candidate<any MagnetometerDriver>(descriptor: t.descriptor) { bus, address in
                let d = t.init(bus: bus, address: address)
                return (d, d)
            }
        }
    }

    static var inertial: [Candidate<any InertialDriver>] {
        InertialChips.all.map { t in
            Candidate<any InertialDriver>(descriptor: t.descriptor) { bus, address in
                let d = t.init(bus: bus, address: address)
                return (d, d)
            }
        }
    }
}
