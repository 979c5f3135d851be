#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How the sensor's axes sit on the board, for naming heading, pitch and roll. Forward is always the
/// sensor's +x axis.
public enum BodyAxes: String, Codable, Sendable, CaseIterable {
    /// x forward, y left, z up: the usual IMU chip frame (the accelerometer reads +g on z lying flat), and BROAD's.
    case forwardLeftUp = "flu"
    /// x forward, y right, z down: the aircraft frame, and Bearing's board frame for the magnetometer.
    case forwardRightDown = "frd"
}

/// Heading, pitch and roll in degrees, the aerospace z-y-x (yaw-pitch-roll) angles of the board's
/// forward-right-down axes in north-east-down: heading clockwise from north of the forward axis projected on
/// the horizontal, 0..<360; pitch positive nose (forward axis) up, −90…90; roll positive right side down,
/// −180…180. gpsd's ATT object gives `heading` in degrees from true north (`mheading` from magnetic north)
/// and `pitch`, `roll`, `yaw` in degrees without a sign convention; these are the ones Bearing fills them with.
public struct AttitudeAngles: Equatable, Sendable {
    public var heading: Double
    public var pitch: Double
    public var roll: Double

    public init(heading: Double, pitch: Double, roll: Double) {
        self.heading = heading
        self.pitch = pitch
        self.roll = roll
    }

    /// The angles of an orientation `q` (sensor → ENU; the heading is from whichever north y points to).
    public init(_ q: Quaternion, body: BodyAxes = .forwardLeftUp) {
        let sideSign: Double = body == .forwardLeftUp ? -1 : 1
        let forward = q.rotate(Vector3(1, 0, 0))
        let right = q.rotate(Vector3(0, sideSign, 0))
        let down = q.rotate(Vector3(0, 0, sideSign))
        heading = Self.normalizedDegrees(Self.heading(forward: forward))
        (pitch, roll) = Self.tilt(forward: forward, right: right, down: down)
    }

    /// Pitch and roll (degrees) of a body whose forward, right and down axes are these, in ENU.
    @inlinable
    public static func tilt(forward: Vector3, right: Vector3, down: Vector3) -> (pitch: Double, roll: Double) {
        // ENU z is up: the down components of the right and down axes are −z.
        (asin(max(-1, min(1, forward.z))) * 180 / .pi, atan2(-right.z, -down.z) * 180 / .pi)
    }

    /// The orientation (sensor → ENU) these angles describe: the inverse of `init(_:body:)`.
    public func quaternion(body: BodyAxes = .forwardLeftUp) -> Quaternion {
        let rad = Double.pi / 180
        // Forward-left-up axes: facing north level is +90° about up; then heading clockwise (about −up),
        // nose up (about −left), right side down (about +forward), each about the turned axes.
        let flu = Quaternion.aboutZ(.pi / 2 - heading * rad)
            * Quaternion(axis: Vector3(0, 1, 0), angle: -pitch * rad)
            * Quaternion(axis: Vector3(1, 0, 0), angle: roll * rad)
        // Forward-right-down axes are the forward-left-up ones turned half a turn about forward.
        return body == .forwardLeftUp ? flu : flu * Quaternion(w: 0, x: 1, y: 0, z: 0)
    }

    /// The heading of `q`'s +x axis (forward in `flu` and `frd` alike), degrees clockwise from north, in
    /// (−180, 180]: `heading` without the rest of the angles (one rotation, one arctangent).
    @inlinable
    public static func heading(_ q: Quaternion) -> Double {
        heading(forward: q.rotate(Vector3(1, 0, 0)))
    }

    /// The heading of `axis` (in `q`'s sensor axes) turned by `q`, degrees clockwise from north, in (−180, 180]:
    /// a vehicle's heading when `axis` is its forward axis in the sensor's. Along +x it is `heading(_:)`.
    @inlinable
    public static func heading(_ q: Quaternion, along axis: Vector3) -> Double {
        heading(forward: q.rotate(axis))
    }

    @inlinable
    static func heading(forward: Vector3) -> Double { atan2(forward.x, forward.y) * 180 / .pi }

    /// `degrees` in [0, 360).
    @inlinable
    public static func normalizedDegrees(_ degrees: Double) -> Double {
        var d = degrees.truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        return d >= 360 ? 0 : d
    }
}

extension Quaternion {
    /// This sensor → ENU orientation referenced to true north instead of magnetic north, for a
    /// declination in degrees (east positive): a turn of the earth frame by −declination about up, so
    /// that headings grow by the declination.
    public func trueNorth(declination: Double) -> Quaternion {
        Quaternion.aboutZ(-declination * .pi / 180) * self
    }
}
