import BearingModel

// Config sections the sensor readers, `bearing run` and the calibration workflow share (`AgentConfig`
// holds them as `magnetometer:`, `imu:` and `heading:`).

/// The compass: which bus and chip, how it is mounted, how often it is read.
public struct MagnetometerConfig: Equatable, Sendable {
    public init() {}
    public var enabled = false
    public var reader = MagnetometerReader.Configuration()
    public var orientation = Orientation.identity
    /// The calibration file (`bearing calibrate` writes it); nil for the default in the state directory.
    public var calibrationFile: String? = nil
}

/// The accelerometer + gyroscope that tilt-compensates the compass: which bus and chip, how it is
/// mounted, how often it is read. Used only together with a magnetometer.
public struct IMUConfig: Equatable, Sendable {
    public init() {}
    public var enabled = false
    public var reader = InertialReader.Configuration()
    public var orientation = Orientation.identity
    /// The accelerometer calibration file (`bearing calibrate --accel` writes it); nil for
    /// `accelerometer.json` beside the magnetometer's calibration file.
    public var calibrationFile: String? = nil
    /// The mounting level file (`bearing level` writes it); nil for `level.json` beside the
    /// magnetometer's calibration file.
    public var levelFile: String? = nil
}

/// How headings are referred to true north.
public struct HeadingConfig: Equatable, Sendable {
    public init() {}
    /// Apply WMM declination (false: publish magnetic heading only).
    public var trueNorth = true
    /// Latitude, longitude (degrees) and height (km) used for the declination until the first fix.
    public var fallbackPosition: Vector3? = nil
}
