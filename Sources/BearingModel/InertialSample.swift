/// One accelerometer (+ gyroscope) sample as an inertial reader reports it, in the chip's own axes.
public struct InertialSample: Equatable, Sendable {
    public var time: GPSTimestamp
    /// Where it came from, e.g. `i2c:/dev/i2c-1:0x6a`.
    public var device: String
    /// The driver's chip name, e.g. `lsm6dsx`.
    public var chip: String
    /// Specific force, m/s², chip axes: about +9.81 along the axis pointing up at rest.
    public var acceleration: Vector3
    /// Angular rate, rad/s, chip axes, right-hand rule; nil from a chip without a gyroscope.
    public var angularRate: Vector3?
    /// An axis of either sensor sat at the end of its range.
    public var saturated: Bool
    /// The chip's die temperature, °C, where it reports one.
    public var temperature: Double?

    public init(time: GPSTimestamp, device: String, chip: String, acceleration: Vector3, angularRate: Vector3?,
                saturated: Bool = false, temperature: Double? = nil) {
        self.time = time
        self.device = device
        self.chip = chip
        self.acceleration = acceleration
        self.angularRate = angularRate
        self.saturated = saturated
        self.temperature = temperature
    }
}
