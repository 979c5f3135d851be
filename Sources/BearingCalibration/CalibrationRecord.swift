import BearingModel
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The calibration file `bearing calibrate` writes and the daemon loads (JSON):
/// `calibrated = matrix · (raw − offset)` in the chip's axes and units, plus what it was fitted from.
public struct CalibrationRecord: Codable, Equatable, Sendable {
    public static let currentFormat = "bearing-calibration/1"
    /// The units of samples from the daemon and the sensor path (drivers scale to µT).
    public static let microtesla = "uT"
    /// What `axes` says in files written since every driver reports a right-handed frame.
    public static let rightHanded = "right-handed"
    /// Chips whose driver changed its axes to make them right-handed, and the sign of each raw axis
    /// then: a record of theirs without `axes` was fitted in the old frame and is converted when read.
    public static let axesBeforeRightHanded: [String: Vector3] = ["lis2mdl": Vector3(1, 1, -1)]

    public struct Figures: Codable, Equatable, Sendable {
        public var gaps: Double
        public var variance: Double
        public var wobble: Double
        public var fitError: Double
        public var headingError: Double?
        public var regions: Int

        enum CodingKeys: String, CodingKey {
            case gaps, variance, wobble, regions
            case fitError = "fit_error"
            case headingError = "heading_error"
        }

        public init(_ f: CalibrationFigures) {
            gaps = f.gaps
            variance = f.variance
            wobble = f.wobble
            fitError = f.fitError
            headingError = f.headingError.isFinite ? f.headingError : nil
            regions = f.regionsCovered
        }
    }

    public var format: String
    /// The driver name of the chip the samples came from, e.g. `qmc5883l`.
    public var chip: String
    public var device: String?
    public var units: String
    public var model: CalibrationModel
    public var offset: [Double]
    public var matrix: [[Double]]
    public var field: Double
    /// `wmm` (World Magnetic Model at `position`), `given` (--field) or `fit` (the fitted radius).
    public var fieldSource: String
    /// Latitude, longitude (degrees) and height (km) the WMM field was taken at.
    public var position: [Double]?
    public var figures: Figures
    public var samples: Int
    public var used: Int
    public var outliers: Int
    public var warnings: [String]
    public var time: String
    /// `right-handed`: fitted in the chip axes as today's drivers report them; absent in older files.
    public var axes: String?

    enum CodingKeys: String, CodingKey {
        case format, chip, device, units, model, offset, matrix, field, position, figures, samples, used, outliers, warnings, time, axes
        case fieldSource = "field_source"
    }

    public init(fit: CalibrationFit, chip: String, device: String?, units: String, fieldSource: String,
                position: [Double]?, time: GPSTimestamp) {
        format = Self.currentFormat
        self.chip = chip
        self.device = device
        self.units = units
        model = fit.model
        let c = fit.calibration
        offset = [c.offset.x, c.offset.y, c.offset.z]
        matrix = c.matrix.rows.map { [$0.x, $0.y, $0.z] }
        field = fit.field
        self.fieldSource = fieldSource
        self.position = position
        figures = Figures(fit.figures)
        samples = fit.samples
        used = fit.used
        outliers = fit.outliers
        warnings = fit.warnings
        self.time = time.iso8601
        axes = Self.rightHanded
    }

    /// The correction this record describes, after checking it is one: finite numbers, a 3×3 matrix that
    /// keeps handedness and is not near-singular, a positive field. A record fitted in a chip's old,
    /// left-handed axes (`axesBeforeRightHanded`) is turned into today's: with F the sign flip between
    /// them, `F·M·(F·v − b) = (F·M·F)·(v − F·b)`.
    public func calibration() throws(CalibrationFitError) -> MagneticCalibration {
        guard format == Self.currentFormat else {
            throw CalibrationFitError("format \"\(format)\" is not \"\(Self.currentFormat)\"")
        }
        guard !chip.isEmpty else { throw CalibrationFitError("\"chip\" is empty") }
        let o = try CalibrationFileDecoding.vector(offset, "offset")
        let m = try CalibrationFileDecoding.matrix(matrix, "matrix")
        guard field > 0, field.isFinite else { throw CalibrationFitError("\"field\" must be a positive number, got \(field)") }
        let singular = (m.transposed * m).symmetricEigen.values
        guard singular[0] > 0, (singular[2] / singular[0]).squareRoot() < 20 else {
            throw CalibrationFitError("\"matrix\" stretches one axis more than 20 times another: not a plausible soft-iron correction")
        }
        if axes == nil, let f = Self.axesBeforeRightHanded[chip] {
            let flip = Matrix3(rows: [Vector3(f.x, 0, 0), Vector3(0, f.y, 0), Vector3(0, 0, f.z)])
            return MagneticCalibration(offset: flip * o, matrix: flip * m * flip)
        }
        if let axes, axes != Self.rightHanded {
            throw CalibrationFitError("\"axes\" is \"\(axes)\", not \"\(Self.rightHanded)\"")
        }
        return MagneticCalibration(offset: o, matrix: m)
    }

    /// Decodes and checks a calibration file; errors name the file and what is wrong.
    public static func decode(_ data: Data, source: String) throws(CalibrationFitError) -> CalibrationRecord {
        try CalibrationFileDecoding.decode(CalibrationRecord.self, from: data, source: source, what: "a calibration file") { (r: CalibrationRecord) throws(CalibrationFitError) in try r.calibration() }
    }

    /// Pretty, key-sorted JSON with a final newline.
    public func encoded() -> Data { CalibrationFileDecoding.encode(self) }
}
