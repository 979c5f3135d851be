import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// How far the board sits off level on its mount, and the rotation that takes it back: a board installed
/// slightly tilted reads roll = pitch = 0 once its vectors are turned by `matrix`.
///
/// Roll and pitch are the board's own (x forward, y right, z down; roll positive right side down, pitch
/// positive nose up) when the vehicle is level. `matrix` is `Ry(pitch)·Rx(roll)`, the aerospace rotation
/// with yaw 0: it turns a board-frame vector into the levelled frame, whose x axis is the board's forward
/// axis brought down into the horizontal, so headings are unchanged.
public struct MountingLevel: Equatable, Sendable {
    /// Degrees.
    public let roll: Double
    public let pitch: Double
    /// Board frame → levelled frame.
    public let matrix: Matrix3

    public init(roll: Double, pitch: Double) {
        self.roll = roll
        self.pitch = pitch
        matrix = Matrix3.rotation(rollDegrees: roll, pitchDegrees: pitch, yawDegrees: 0)
    }

    /// The level of a board at rest whose (calibrated, board-frame) specific force is `f`: at rest it
    /// points up, so a level board reads (0, 0, −g).
    public init(specificForce f: Vector3) {
        self.init(roll: atan2(-f.y, -f.z) * 180 / .pi, pitch: atan2(f.x, (f.y * f.y + f.z * f.z).squareRoot()) * 180 / .pi)
    }

    public static let none = MountingLevel(roll: 0, pitch: 0)

    /// The angle between the board's z axis and the vertical, degrees.
    public var tilt: Double {
        acos(max(-1, min(1, cos(roll * .pi / 180) * cos(pitch * .pi / 180)))) * 180 / .pi
    }

    public func apply(_ v: Vector3) -> Vector3 { matrix * v }

    /// A board tilted more than this is probably not mounted as meant (or not on its mount): refused
    /// unless forced, and never beyond `forcedMaximumTilt`, where the remaining attitude would be a
    /// different mounting, for `imu.orientation`.
    public static let maximumTilt = 20.0
    public static let forcedMaximumTilt = 45.0

    /// Why this level should not be saved, or nil.
    public func refusal(force: Bool) -> String? {
        let shown = String(printf: "%.1f° (roll %.1f°, pitch %.1f°)", tilt, roll, pitch)
        if tilt > Self.forcedMaximumTilt {
            return "the board is tilted \(shown), more than \(Int(Self.forcedMaximumTilt))°: that is a mounting for imu.orientation / imu.rotation, not a level correction"
        }
        if tilt > Self.maximumTilt && !force {
            return "the board is tilted \(shown), more than \(Int(Self.maximumTilt))°: is it on its mount? --force accepts up to \(Int(Self.forcedMaximumTilt))°"
        }
        return nil
    }
}

/// A mounting level measured from a still stretch of `duration` seconds of calibrated, board-frame
/// specific force (and angular rate when there is a gyroscope): the first stretch the `StaticPoseDetector`
/// finds that lasts that long.
public struct LevelMeasurement: Sendable {
    public let duration: Double
    public private(set) var detector: StaticPoseDetector
    /// The still stretch measured, once one has lasted `duration`.
    public private(set) var pose: StaticPose?

    public init(duration: Double = 5, thresholds: StaticPoseDetector.Thresholds = .init()) {
        self.duration = duration
        detector = StaticPoseDetector(thresholds: thresholds)
    }

    /// Feeds one sample; returns true once a still stretch has lasted `duration` (later samples are ignored).
    @discardableResult
    public mutating func add(time: Double, specificForce: Vector3, angularRate: Vector3?) -> Bool {
        guard pose == nil else { return true }
        detector.add(time: time, specificForce: specificForce, angularRate: angularRate)
        if let held = detector.holding, held.duration >= duration { pose = held }
        return pose != nil
    }

    /// The level, or why there is none: the board never stayed still for `duration`.
    public func result() throws(CalibrationFitError) -> (level: MountingLevel, pose: StaticPose) {
        guard let pose else {
            let longest = detector.longestStill
            throw CalibrationFitError(String(printf: "the board was not still: the longest still stretch lasted %.1f s of the %.1f s needed (a level needs the accelerometer within %.2f m/s² and the gyroscope within %.0f °/s of their means)",
                                             longest, duration, detector.thresholds.accelerometer, detector.thresholds.gyroscope))
        }
        return (MountingLevel(specificForce: pose.specificForce), pose)
    }
}

/// The mounting level file `bearing level` writes and the daemon loads (JSON).
public struct MountingLevelRecord: Codable, Equatable, Sendable {
    public static let currentFormat = "bearing-level/1"
    public static let degrees = "deg"

    public var format: String
    public var units: String
    /// The board's tilt on its mount, degrees.
    public var roll: Double
    public var pitch: Double
    public var tilt: Double
    /// The mean specific force it was measured from: board frame, calibrated, not levelled, m/s².
    public var specificForce: [Double]
    public var duration: Double
    public var samples: Int
    /// The IMU it was measured with, and the accelerometer calibration applied (when it was fitted); nil
    /// when the accelerometer was uncalibrated.
    public var device: String?
    public var accelerometerCalibration: String?
    public var warnings: [String]
    public var time: String

    enum CodingKeys: String, CodingKey {
        case format, units, roll, pitch, tilt, duration, samples, device, warnings, time
        case specificForce = "specific_force"
        case accelerometerCalibration = "accelerometer_calibration"
    }

    public init(level: MountingLevel, pose: StaticPose, device: String?, accelerometerCalibration: String?, warnings: [String],
                time: GPSTimestamp) {
        format = Self.currentFormat
        units = Self.degrees
        roll = level.roll
        pitch = level.pitch
        tilt = level.tilt
        let f = pose.specificForce
        specificForce = [f.x, f.y, f.z]
        duration = pose.duration
        samples = pose.samples
        self.device = device
        self.accelerometerCalibration = accelerometerCalibration
        self.warnings = warnings
        self.time = time.iso8601
    }

    /// The level this record describes, after checking it: degrees, finite, at most 45° off.
    public func level() throws(CalibrationFitError) -> MountingLevel {
        guard format == Self.currentFormat else {
            throw CalibrationFitError("format \"\(format)\" is not \"\(Self.currentFormat)\"")
        }
        guard units == Self.degrees else { throw CalibrationFitError("units \"\(units)\": roll and pitch are in degrees (\"\(Self.degrees)\")") }
        guard roll.isFinite, pitch.isFinite else { throw CalibrationFitError("\"roll\" and \"pitch\" must be finite numbers") }
        let level = MountingLevel(roll: roll, pitch: pitch)
        guard level.tilt <= MountingLevel.forcedMaximumTilt else {
            throw CalibrationFitError(String(printf: "roll %g°, pitch %g° tilt the board %.1f°: more than %g° is not a level correction", roll, pitch, level.tilt, MountingLevel.forcedMaximumTilt))
        }
        return level
    }

    /// Decodes and checks a mounting level file; errors name the file and what is wrong.
    public static func decode(_ data: Data, source: String) throws(CalibrationFitError) -> MountingLevelRecord {
        try CalibrationFileDecoding.decode(Self.self, from: data, source: source, what: "a mounting level file") { (r: Self) throws(CalibrationFitError) in try r.level() }
    }

    /// Pretty, key-sorted JSON with a final newline.
    public func encoded() -> Data { CalibrationFileDecoding.encode(self) }
}
