import BearingCore

/// One address that answered a scan, and what it was identified as.
public struct ProbeFinding: Equatable, Sendable {
    public var address: UInt8
    public var answer: I2CProbeResult
    /// The driver name of the identified chip, nil when unknown.
    public var chip: String?
    public var displayName: String?
    public var confidence: ChipDescriptor.Confidence?
    /// The address the driver uses (0x0C for an AK09916 found through its ICM-20948 host).
    public var driverAddress: UInt8?
    public var note: String?
}

/// Finding chips: an i2cdetect-style scan with ID-register identification, and the search the reader
/// does for a configured (or `auto`) chip.
public enum ChipProbe {
    /// Scans `range` the way i2cdetect does, then reads the ID registers of each chip that can live at
    /// each answering address. Only BMM150 candidates are written to (its ID needs power-on), and only
    /// at 0x10–0x13; an ICM-20948 is identified by WHO_AM_I without opening its bypass.
    public static func scan(_ bus: I2CBus, range: ClosedRange<UInt8> = I2CProbeMethod.scanRange) throws(I2CError) -> [ProbeFinding] {
        var out: [ProbeFinding] = []
        for address in range {
            let answer = try bus.probe(address: address)
            guard answer != .absent else { continue }
            var f = ProbeFinding(address: address, answer: answer)
            if answer == .busy {
                f.note = "owned by a kernel driver"
            } else if let type = identify(bus, address: address) {
                let d = type.descriptor
                f.chip = d.name; f.displayName = d.displayName; f.confidence = d.confidence; f.driverAddress = address
            } else if AK09916.Host.addresses.contains(address), isICM20948(bus, address) {
                let d = AK09916.descriptor
                f.chip = d.name; f.displayName = "TDK ICM-20948 (AK09916 via bypass at 0x0c)"
                f.confidence = .high; f.driverAddress = 0x0C
            }
            out.append(f)
        }
        return out
    }

    static func isICM20948(_ bus: I2CBus, _ address: UInt8) -> Bool {
        (try? bus.readByte(address: address, register: 0x00)) == 0xEA
    }

    /// The first supported chip whose ID registers match at `address`.
    public static func identify(_ bus: I2CBus, address: UInt8) -> (any MagnetometerDriver.Type)? {
        for type in MagnetometerChips.all where type.descriptor.addresses.contains(address) {
            if (try? type.init(bus: bus, address: address).identify()) != nil { return type }
        }
        return nil
    }

    /// The driver for `chip` (a name, or nil for any supported chip) at `address` (nil: each address the
    /// chip can have), identified. Errors say what was tried.
    public static func find(_ bus: I2CBus, chip: String?, address: UInt8?) throws(MagnetometerError) -> any MagnetometerDriver {
        let types: [any MagnetometerDriver.Type]
        if let chip {
            guard let t = MagnetometerChips.driver(named: chip) else {
                throw .unsupported(chip: chip, "unknown chip; supported: \(MagnetometerChips.names.joined(separator: ", "))")
            }
            types = [t]
        } else {
            types = MagnetometerChips.all
        }
        var lastError: MagnetometerError?
        for type in types {
            for a in address.map({ [$0] }) ?? type.descriptor.addresses {
                let d = type.init(bus: bus, address: a)
                do {
                    try d.identify()
                    return d
                } catch {
                    lastError = error
                }
            }
        }
        if chip == nil, address == nil {
            throw .unsupported(chip: "auto", "no supported magnetometer found on \(bus.path) (run `bearing probe --bus \(bus.path)`)")
        }
        throw lastError ?? .unsupported(chip: chip ?? "auto", "nothing to try")
    }
}
