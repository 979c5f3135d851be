#if canImport(Glibc)
import Glibc
#endif

/// One magnetometer reading, scaled to µT, in the chip's own axes.
public struct MagneticSample: Equatable, Sendable {
    public var time: GPSTimestamp
    /// Where it came from, e.g. `i2c:/dev/i2c-1:0x1e`.
    public var device: String
    /// The driver's chip name, e.g. `hmc5883l`.
    public var chip: String
    /// µT, chip axes.
    public var field: Vector3
    /// An axis saturated: the vector is not to be trusted.
    public var overflow: Bool

    public init(time: GPSTimestamp, device: String, chip: String, field: Vector3, overflow: Bool = false) {
        self.time = time
        self.device = device
        self.chip = chip
        self.field = field
        self.overflow = overflow
    }
}

/// How the chip is mounted: board axes (x forward, y right, z down) from chip axes, as an axis remap
/// such as `+X-Y-Z` (board x = chip x, board y = −chip y, board z = −chip z) followed by an optional
/// rotation (roll, pitch, yaw in degrees) for a chip mounted at an angle.
public struct Orientation: Equatable, Sendable, CustomStringConvertible {
    public var axes: String
    public var rotation: Vector3
    /// Chip frame → board frame.
    public let matrix: Matrix3

    public static let identity = try! Orientation(axes: "+X+Y+Z")

    public init(axes: String, rollPitchYaw rotation: Vector3 = .zero) throws(OrientationError) {
        let text = axes.uppercased()
        let chars = Array(text)
        guard chars.count == 6 else { throw OrientationError(axes, "expected three signed axes such as +X-Y-Z") }
        var rows: [Vector3] = []
        var used = Set<Character>()
        for i in stride(from: 0, to: 6, by: 2) {
            let sign: Double
            switch chars[i] {
            case "+": sign = 1
            case "-": sign = -1
            default: throw OrientationError(axes, "expected + or - before each axis, got \"\(chars[i])\"")
            }
            let axis = chars[i + 1]
            guard !used.contains(axis) else { throw OrientationError(axes, "axis \(axis) appears twice") }
            used.insert(axis)
            switch axis {
            case "X": rows.append(Vector3(sign, 0, 0))
            case "Y": rows.append(Vector3(0, sign, 0))
            case "Z": rows.append(Vector3(0, 0, sign))
            default: throw OrientationError(axes, "axes are X, Y and Z, got \"\(axis)\"")
            }
        }
        let remap = Matrix3(rows: rows)
        guard remap.determinant > 0 else {
            throw OrientationError(axes, "a mirror image, not a rotation (flip the sign of one axis)")
        }
        guard rotation.isFinite else { throw OrientationError(axes, "rotation angles must be finite") }
        self.axes = text
        self.rotation = rotation
        matrix = Matrix3.rotation(rollDegrees: rotation.x, pitchDegrees: rotation.y, yawDegrees: rotation.z) * remap
    }

    public func toBoard(_ v: Vector3) -> Vector3 { matrix * v }

    public var description: String {
        rotation == .zero ? axes : "\(axes) rotated roll \(rotation.x)°, pitch \(rotation.y)°, yaw \(rotation.z)°"
    }
}

public struct OrientationError: Error, Equatable, CustomStringConvertible {
    public var message: String
    init(_ axes: String, _ why: String) { message = "orientation \"\(axes)\": \(why)" }
    public var description: String { message }
}

/// Hard- and soft-iron correction: `calibrated = matrix · (raw − offset)`. Identity until calibrated.
public struct MagneticCalibration: Equatable, Sendable {
    public var offset: Vector3
    public var matrix: Matrix3

    public init(offset: Vector3, matrix: Matrix3) {
        self.offset = offset
        self.matrix = matrix
    }

    public static let identity = MagneticCalibration(offset: .zero, matrix: .identity)
    public var isIdentity: Bool { self == .identity }

    public func apply(_ raw: Vector3) -> Vector3 { matrix * (raw - offset) }
}

/// Where the declination applied to a heading came from.
public enum DeclinationSource: String, Sendable {
    /// WMM at the latest GPS fix.
    case fix
    /// WMM at the configured fallback position (no fix yet).
    case fallback
}

/// A compass reading in gpsd's ATT terms, plus the declination Bearing applied.
public struct Attitude: Equatable, Sendable {
    public var time: GPSTimestamp
    public var device: String
    /// True heading, degrees [0, 360); nil without a declination (no fix and no fallback position).
    public var heading: Double?
    /// Magnetic heading, degrees [0, 360).
    public var magneticHeading: Double
    /// Field in the board frame after calibration, µT.
    public var field: Vector3
    /// Dip of the measured field below the board's x–y plane, degrees (the inclination when level).
    public var dip: Double
    /// gpsd's magnetometer status letter: N normal, C calibration alarm (uncalibrated), P high alarm (overflow).
    public var magStatus: String
    public var declination: Double?
    public var declinationSource: DeclinationSource?
    /// The deviation applied, degrees east (NMEA's sense: magnetic = compass + deviation): `magneticHeading`
    /// and `heading` include it; nil when no deviation curve is in force.
    public var deviation: Double?

    /// Online calibration's judgement of the compass (`good`, `fair`, `poor`, `uncalibrated`, `unknown`): ATT's
    /// `mag_q`, Home Assistant's compass quality; nil when online calibration is off.
    public var quality: String?
    /// Seconds the heading has ridden on the gyroscope alone, the field judged disturbed (ATT's `mag_held`); nil
    /// while the field corrects it.
    public var held: Double?

    /// The sensor (compass) heading, before deviation: NMEA HDG's heading and Signal K's `headingCompass`.
    public var compassHeading: Double { deviation.map { Compass.normalize(magneticHeading - $0) } ?? magneticHeading }

    // The fields below come only from the fused (IMU + magnetometer) path; nil on a magnetometer alone.

    /// Roll, pitch and yaw of the board (x forward, y right, z down), degrees, as `AttitudeAngles` defines
    /// them: roll positive right side down (−180…180), pitch positive nose up (−90…90), yaw the heading
    /// of `quaternion`'s north (true when `declination` is known, else magnetic), 0..<360.
    public var roll: Double?
    public var pitch: Double?
    public var yaw: Double?
    /// Specific force in the board frame, m/s² (about 9.81 up, i.e. −9.81 on a level board's z, at rest).
    public var acceleration: Vector3?
    /// Angular rate in the board frame, °/s, right-hand rule about each axis.
    public var angularRate: Vector3?
    /// Board → ENU rotation (`v_ENU = q ⊗ v ⊗ q*`), y true north when `declination` is known, else magnetic.
    public var quaternion: Quaternion?
    /// The IMU's die temperature, °C (gpsd's ATT `temp`, "temperature at the sensor"), where it reports one.
    public var temperature: Double?
    /// Rate of turn, °/min (gpsd's ATT `rot`): how fast the heading changes, positive turning to starboard
    /// (clockwise seen from above), negative to port; nil until known (`RateOfTurn` fills it).
    public var rateOfTurn: Double?

    @inlinable public var magLength: Double { field.length }

    public init(time: GPSTimestamp, device: String, heading: Double?, magneticHeading: Double, field: Vector3, dip: Double,
                magStatus: String, declination: Double?, declinationSource: DeclinationSource?) {
        self.time = time
        self.device = device
        self.heading = heading
        self.magneticHeading = magneticHeading
        self.field = field
        self.dip = dip
        self.magStatus = magStatus
        self.declination = declination
        self.declinationSource = declinationSource
    }
}

/// Heading maths for a level board (x forward, y right, z down). A tilted board reads a heading error
/// that grows with the dip; with an accelerometer + gyroscope configured, `AttitudeFusion` compensates it.
public enum Compass {
    /// Magnetic heading in [0, 360) of a board-frame field.
    public static func magneticHeading(_ b: Vector3) -> Double {
        normalize(atan2(-b.y, b.x) * 180 / .pi)
    }

    public static func dip(_ b: Vector3) -> Double {
        atan2(b.z, (b.x * b.x + b.y * b.y).squareRoot()) * 180 / .pi
    }

    @inlinable public static func normalize(_ degrees: Double) -> Double {
        var d = fmod(degrees, 360)
        if d < 0 { d += 360 }
        if d >= 360 { d -= 360 }
        return d
    }

    /// The attitude for one sample: calibration (in the chip's axes, where it was fitted), then the
    /// mounting orientation, then heading and declination.
    public static func attitude(
        _ sample: MagneticSample, orientation: Orientation, calibration: MagneticCalibration,
        declination: (value: Double, source: DeclinationSource)?
    ) -> Attitude {
        let b = orientation.toBoard(calibration.apply(sample.field))
        let m = magneticHeading(b)
        return Attitude(
            time: sample.time, device: sample.device,
            heading: declination.map { normalize(m + $0.value) }, magneticHeading: m,
            field: b, dip: dip(b),
            magStatus: sample.overflow ? "P" : (calibration.isIdentity ? "C" : "N"),
            declination: declination?.value, declinationSource: declination?.source)
    }
}

/// A moving average over the last `window` attitudes. Headings are averaged as unit vectors
/// (never as angles, which would put the mean of 359° and 1° at 180°); the field is averaged per axis.
public struct AttitudeSmoother: Sendable {
    public let window: Int
    /// The last `window` readings as heading unit vectors and fields, in a ring: each reading's sine and
    /// cosine are computed once, not once per window it is in.
    private var recent: [(cos: Double, sin: Double, field: Vector3)] = []
    private var next = 0
    public private(set) var smoothed: Attitude?

    public init(window: Int) { self.window = max(1, window) }

    public mutating func add(_ a: Attitude) {
        let radians = a.magneticHeading * .pi / 180
        let entry = (cos: cos(radians), sin: sin(radians), field: a.field)
        if recent.count < window { recent.append(entry) } else { recent[next] = entry }
        next = (next + 1) % window
        var sx = 0.0, sy = 0.0
        var field = Vector3.zero
        for r in recent {
            sx += r.cos
            sy += r.sin
            field = field + r.field
        }
        var out = a
        out.field = field / Double(recent.count)
        // Opposite headings cancel: with no resultant direction the newest reading stands.
        if (sx * sx + sy * sy).squareRoot() > 1e-9 * Double(recent.count) {
            out.magneticHeading = Compass.normalize(atan2(sy, sx) * 180 / .pi)
        }
        out.dip = Compass.dip(out.field)
        out.heading = a.declination.map { Compass.normalize(out.magneticHeading + $0) }
        smoothed = out
    }
}
