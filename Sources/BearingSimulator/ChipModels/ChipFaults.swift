import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// Faults a chip model can be given, below the bus interface, as a user's chip might have them: what
/// `bearing selftest` must name. Each applies to what the chip senses (in its own axes, before its
/// conversion to counts), to its conversions, or to its registers.
public struct ChipFaults {
    /// This axis (0 x, 1 y, 2 z) reads the value it had at the first conversion, for ever (a dead channel).
    public var stuckAxis: Int?
    /// This axis reads far beyond the chip's range: its counts sit at the end of the range (a magnet on the chip,
    /// a broken channel).
    public var saturatedAxis: Int?
    /// Extra white noise, standard deviation per conversion: µT for a magnetometer, m/s² and rad/s for an
    /// accelerometer and gyroscope.
    public var fieldNoise = 0.0
    public var accelerationNoise = 0.0
    public var angularRateNoise = 0.0
    /// The chip converts at most this often (samples a second), whatever its rate register says: a slow
    /// or mis-clocked part. Needs `clock`.
    public var outputRate: Double?
    /// A clone that answers to the ID but to nothing else: its registers keep their reset values and every
    /// write is ignored (so it never leaves standby, nor takes a range).
    public var clone = false
    /// Mounted turned half a turn about its z axis from what the board profile says: x and y the other way.
    public var turnedHalfAboutZ = false
    /// Mounted upside down (turned half a turn about its x axis) from what the board profile says: y and z the other way.
    public var upsideDown = false
    /// Seconds, for `outputRate`.
    public var clock: () -> Double = { 0 }
    /// SplitMix64 (Steele, Lea & Flood 2014), for the noise: the same every run.
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    /// The value each quantity (`slot`) had at its first conversion, for `stuckAxis`.
    var stuck: [Int: Vector3] = [:]

    public init() {}

    /// What the chip converts, from what it senses: `noise` the standard deviation for this quantity, `slot`
    /// which quantity it is (field 0, specific force 1, angular rate 2).
    mutating func apply(_ v: Vector3, noise: Double, slot: Int = 0) -> Vector3 {
        var v = v
        if turnedHalfAboutZ { v = Vector3(-v.x, -v.y, v.z) }
        if upsideDown { v = Vector3(v.x, -v.y, -v.z) }
        if noise > 0 { v = v + Vector3(gaussian(), gaussian(), gaussian()) * noise }
        if let axis = stuckAxis {
            let held = stuck[slot] ?? v
            stuck[slot] = held
            v = Self.set(v, axis, Self.get(held, axis))
        }
        if let axis = saturatedAxis { v = Self.set(v, axis, 1e9) }
        return v
    }

    mutating func uniform() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
    }

    /// Box–Muller.
    mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    static func get(_ v: Vector3, _ axis: Int) -> Double { axis == 0 ? v.x : axis == 1 ? v.y : v.z }
    static func set(_ v: Vector3, _ axis: Int, _ value: Double) -> Vector3 {
        Vector3(axis == 0 ? value : v.x, axis == 1 ? value : v.y, axis == 2 ? value : v.z)
    }
}
