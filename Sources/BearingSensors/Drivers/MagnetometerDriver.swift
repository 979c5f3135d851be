import BearingModel

/// Read and conversion settings; each driver picks the nearest rate and range its chip supports.
public struct MagnetometerSettings: Equatable, Sendable {
    /// Samples per second wanted; the driver selects the smallest output data rate at or above it.
    public var rate: Double = 10
    /// Full-scale field wanted, µT; the driver selects the smallest range at or above it (nil: chip default).
    public var rangeMicrotesla: Double? = nil
    /// Polls of the data-ready flag before a read gives up (each poll waits a tenth of a sample period).
    public var readyPolls: Int = 50
    public init() {}
}

/// One reading: field in µT in the chip's axes, and whether an axis saturated.
public struct MagneticReading: Equatable, Sendable {
    public var field: Vector3
    public var overflow: Bool
    public init(field: Vector3, overflow: Bool) {
        self.field = field
        self.overflow = overflow
    }
}

/// What a driver did, for `probe` and the log: the rate and range it chose.
public struct DriverConfiguration: Equatable, Sendable, CustomStringConvertible {
    public var rate: Double
    public var rangeMicrotesla: Double
    public var description: String { "\(rate) Hz, ±\(rangeMicrotesla) µT" }
}

/// A magnetometer chip driver: a register map, an ID check, a configure step and a read that scales to µT.
/// One file per chip under `Chips/`.
public protocol MagnetometerDriver: ChipDriver {
    /// Sets rate, range and continuous mode; returns what it chose.
    func configure(_ settings: MagnetometerSettings) throws(MagnetometerError) -> DriverConfiguration
    /// Waits (bounded) for data-ready and reads one sample.
    func read() throws(MagnetometerError) -> MagneticReading
}

extension MagnetometerDriver {
    /// Refuses a wanted range beyond the chip's full scale (`described` as the error shows it).
    func requireRange(_ settings: MagnetometerSettings, within fullScale: Double, described: String) throws(MagnetometerError) {
        if let wanted = settings.rangeMicrotesla, wanted > fullScale {
            throw .unsupported(chip: Self.descriptor.displayName, "range ±\(wanted) µT is beyond the chip's \(described)")
        }
    }
}
