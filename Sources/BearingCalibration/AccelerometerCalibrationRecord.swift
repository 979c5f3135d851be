import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The accelerometer calibration file `bearing calibrate --accel` writes and the daemon loads (JSON):
/// `corrected = matrix · (raw − offset)` in the chip's axes and m/s², the poses it was fitted to and its figures.
public struct AccelerometerCalibrationRecord: Codable, Equatable, Sendable {
    public static let currentFormat = "bearing-accelerometer-calibration/1"
    /// The units of the daemon's inertial samples (drivers scale to m/s²).
    public static let metresPerSecondSquared = "m/s2"

    public var format: String
    /// The driver name of the chip the poses came from, e.g. `lsm6dsx`.
    public var chip: String
    public var device: String?
    public var units: String
    /// `axes` or `ellipsoid`.
    public var model: CalibrationModel
    public var offset: [Double]
    public var matrix: [[Double]]
    /// The magnitude corrected readings at rest have, m/s².
    public var gravity: Double
    public var figures: AccelerometerFigures
    /// The pose means fitted, raw, chip axes, m/s².
    public var poses: [[Double]]
    public var warnings: [String]
    public var time: String

    public init(fit: AccelerometerFit, chip: String, device: String?, time: GPSTimestamp) {
        format = Self.currentFormat
        self.chip = chip
        self.device = device
        units = Self.metresPerSecondSquared
        model = fit.model
        offset = [fit.correction.offset.x, fit.correction.offset.y, fit.correction.offset.z]
        matrix = fit.correction.matrix.rows.map { [$0.x, $0.y, $0.z] }
        gravity = fit.gravity
        figures = fit.figures
        poses = fit.poses.map { [$0.specificForce.x, $0.specificForce.y, $0.specificForce.z] }
        warnings = fit.warnings
        self.time = time.iso8601
    }

    /// The correction this record describes, after checking it is one an accelerometer can need: m/s², the
    /// axes or ellipsoid model, finite numbers, an offset under half a g, a matrix that keeps handedness and
    /// scales no axis outside 0.5…2.
    public func correction() throws(CalibrationFitError) -> AccelerometerCorrection {
        guard format == Self.currentFormat else {
            throw CalibrationFitError("format \"\(format)\" is not \"\(Self.currentFormat)\"")
        }
        guard !chip.isEmpty else { throw CalibrationFitError("\"chip\" is empty") }
        guard units == Self.metresPerSecondSquared else {
            throw CalibrationFitError("units \"\(units)\", the daemon's accelerometer samples are in m/s² (\"\(Self.metresPerSecondSquared)\")")
        }
        guard model == .axes || model == .ellipsoid else {
            throw CalibrationFitError("model \"\(model.rawValue)\": an accelerometer calibration is axes or ellipsoid")
        }
        let o = try CalibrationFileDecoding.vector(offset, "offset")
        guard o.length < AccelerometerCalibrator.standardGravity / 2 else {
            throw CalibrationFitError("\"offset\" is \(o.length) m/s²: more than half a g is no accelerometer's offset")
        }
        let m = try CalibrationFileDecoding.matrix(matrix, "matrix")
        let singular = (m.transposed * m).symmetricEigen.values.map { $0.squareRoot() }
        guard singular[0] >= 0.5, singular[2] <= 2 else {
            throw CalibrationFitError("\"matrix\" scales an axis by \(singular[0] < 0.5 ? singular[0] : singular[2]): outside 0.5…2, not a plausible accelerometer correction")
        }
        guard gravity > 0, gravity.isFinite else { throw CalibrationFitError("\"gravity\" must be a positive number, got \(gravity)") }
        return AccelerometerCorrection(offset: o, matrix: m)
    }

    /// Decodes and checks an accelerometer calibration file; errors name the file and what is wrong.
    public static func decode(_ data: Data, source: String) throws(CalibrationFitError) -> AccelerometerCalibrationRecord {
        try CalibrationFileDecoding.decode(Self.self, from: data, source: source, what: "an accelerometer calibration file") { (r: Self) throws(CalibrationFitError) in try r.correction() }
    }

    /// Pretty, key-sorted JSON with a final newline.
    public func encoded() -> Data { CalibrationFileDecoding.encode(self) }
}
