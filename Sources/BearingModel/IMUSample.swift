/// One row of an IMU recording.
public struct IMUSample: Equatable, Sendable {
    /// Seconds, any origin.
    public var time: Double
    /// Specific force, m/s², sensor frame (points up at rest).
    public var accelerometer: Vector3
    /// Angular rate, rad/s, sensor frame.
    public var gyroscope: Vector3
    /// Magnetic field, sensor frame (µT by convention); nil in a 6D recording.
    public var magnetometer: Vector3?

    public init(time: Double, accelerometer: Vector3, gyroscope: Vector3, magnetometer: Vector3? = nil) {
        self.time = time
        self.accelerometer = accelerometer
        self.gyroscope = gyroscope
        self.magnetometer = magnetometer
    }
}
