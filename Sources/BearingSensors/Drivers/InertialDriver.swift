import BearingModel

/// Rate and ranges wanted from an accelerometer + gyroscope; each driver picks the nearest its chip supports.
public struct InertialSettings: Equatable, Sendable {
    /// Samples per second wanted; the driver selects the smallest output data rate at or above it.
    public var rate: Double = 100
    /// Accelerometer full scale wanted, g; the smallest range at or above it (nil: ±4 g).
    public var accelerationRangeG: Double? = nil
    /// Gyroscope full scale wanted, °/s; the smallest range at or above it (nil: ±500 °/s).
    public var angularRateRangeDPS: Double? = nil
    /// Polls of the data-ready flags before a read gives up (each poll waits a tenth of a sample period).
    public var readyPolls: Int = 50
    public init() {}
}

/// What an inertial driver chose: the output data rate and the full scales.
public struct InertialConfiguration: Equatable, Sendable, CustomStringConvertible {
    public var rate: Double
    public var accelerationRangeG: Double
    /// nil for an accelerometer without a gyroscope.
    public var angularRateRangeDPS: Double?

    public init(rate: Double, accelerationRangeG: Double, angularRateRangeDPS: Double?) {
        self.rate = rate
        self.accelerationRangeG = accelerationRangeG
        self.angularRateRangeDPS = angularRateRangeDPS
    }

    public var description: String {
        "\(rate) Hz, ±\(accelerationRangeG) g" + (angularRateRangeDPS.map { ", ±\($0) °/s" } ?? ", no gyroscope")
    }
}

/// One sample in the chip's axes.
///
/// `acceleration` is specific force (what an accelerometer measures: acceleration minus gravity), m/s²:
/// a chip lying still and level, top face up, reads about +9.81 on Z. `angularRate` is rad/s, positive
/// counter-clockwise about each axis seen from its positive end (right-hand rule); nil from an
/// accelerometer without a gyroscope (LSM303). The axes form a right-handed frame: the chips' own, except
/// the LSM9DS1's left-handed registers, whose X its driver reverses.
public struct InertialReading: Equatable, Sendable {
    public var acceleration: Vector3
    public var angularRate: Vector3?
    /// An accelerometer axis sat at the end of its output range: the value is a lower bound.
    public var accelerationSaturated: Bool
    /// A gyroscope axis sat at the end of its output range.
    public var angularRateSaturated: Bool
    /// The die temperature, °C, where the chip reports one (it is not the air temperature).
    public var temperature: Double?

    public init(acceleration: Vector3, angularRate: Vector3?, accelerationSaturated: Bool,
                angularRateSaturated: Bool, temperature: Double?) {
        self.acceleration = acceleration
        self.angularRate = angularRate
        self.accelerationSaturated = accelerationSaturated
        self.angularRateSaturated = angularRateSaturated
        self.temperature = temperature
    }
}

/// An accelerometer (+ gyroscope) chip driver: an ID check, a configure step and a burst read that
/// scales to m/s² and rad/s. One file per chip family under `Chips/`. Without a gyroscope the fusion
/// falls back to an accelerometer-tilted compass (`AttitudeFilterParameters.withoutGyroscope`).
public protocol InertialDriver: ChipDriver {
    /// Wakes the chip and sets rate and ranges; returns what it chose.
    func configure(_ settings: InertialSettings) throws(SensorError) -> InertialConfiguration
    /// Waits (bounded) for data-ready and reads one sample, accelerometer and gyroscope in one transfer
    /// (`angularRate` nil when the chip has no gyroscope).
    func read() throws(SensorError) -> InertialReading
    /// The chip `identify` found, e.g. "ST LSM6DSL" for a family driver.
    var identifiedName: String { get }
}

extension InertialDriver {
    public var identifiedName: String { Self.descriptor.displayName }
}

/// Unit conversions and the saturation test the inertial drivers share.
enum Inertial {
    /// Standard gravity (the "g" of accelerometer datasheets), m/s².
    static let standardGravity = 9.80665
    static let radiansPerDegree = Double.pi / 180
    /// Default full scales when the settings ask for none.
    static let defaultAccelerationRangeG = 4.0
    static let defaultAngularRateRangeDPS = 500.0

    /// One sensor's three raw counts, X, Y, Z (held inline: a sample is read a hundred times a second).
    struct Counts {
        var x, y, z: Int
        /// Left-justified data brought down `n` bits; an arithmetic shift keeps the sign.
        func shiftedRight(_ n: Int) -> Counts { Counts(x: x >> n, y: y >> n, z: z >> n) }
    }

    /// Three raw counts times `scale`.
    static func vector(_ c: Counts, _ scale: Double) -> Vector3 {
        Vector3(Double(c.x) * scale, Double(c.y) * scale, Double(c.z) * scale)
    }

    /// Whether any count sits at an end of the `bits`-wide signed output range (16 bits, or 12 for the
    /// LSM303's high-resolution mode).
    static func saturated(_ c: Counts, bits: Int = 16) -> Bool {
        let top = 1 << (bits - 1) - 1
        func atEnd(_ v: Int) -> Bool { v >= top || v <= -top - 1 }
        return atEnd(c.x) || atEnd(c.y) || atEnd(c.z)
    }

    /// Three little-endian int16s from `bytes` at `offset`.
    static func le(_ bytes: [UInt8], at offset: Int) -> Counts {
        Counts(x: int16LE(bytes[offset], bytes[offset + 1]), y: int16LE(bytes[offset + 2], bytes[offset + 3]),
               z: int16LE(bytes[offset + 4], bytes[offset + 5]))
    }

    /// Three big-endian int16s from `bytes` at `offset`.
    static func be(_ bytes: [UInt8], at offset: Int) -> Counts {
        Counts(x: int16BE(bytes[offset], bytes[offset + 1]), y: int16BE(bytes[offset + 2], bytes[offset + 3]),
               z: int16BE(bytes[offset + 4], bytes[offset + 5]))
    }
}
