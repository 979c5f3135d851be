import BearingCalibration
import BearingModel
import FoundationEssentials

/// The online calibration kept across restarts (`calibration.auto_file`, written atomically at each
/// change): what was learnt, on top of which manual calibration (`baseline`: its fitted time; nil: none),
/// and how well it explained the field. At start it is put in force only while `baseline` is still the
/// manual calibration in force: a new `bearing calibrate` result starts tracking again from itself.
public struct OnlineCalibrationRecord: Codable, Equatable, Sendable {
    public static let currentFormat = "bearing-online-calibration-1"

    public var format: String
    /// The chip the samples came from (nil: not known when it was written).
    public var chip: String?
    /// `calibrated = matrix · (raw − offset)`, µT.
    public var offset: [Double]
    public var matrix: [[Double]]
    /// The field magnitude it scales to, µT, and WMM's at the fix where that held (nil: none known; written before
    /// Bearing kept it). A daemon started elsewhere scales `field` by WMM's at its first fix over this.
    public var field: Double?
    public var fieldWMM: Double?
    /// Learnt before any fix: WMM's magnitude at the fallback position (`heading.fallback_position`) it was scaled to
    /// (nil: it was not, or written before Bearing kept it). A daemon started from it scales it at its first fix to
    /// WMM's there, in proportion, as the daemon that learnt it would have.
    public var fieldFallback: Double?
    public var baseline: String?
    /// When it was learnt (UTC, ISO 8601), and its misfit then: magnitude spread (%) and dip spread (°).
    public var time: String
    public var misfitPercent: Double?
    public var dipSpread: Double?
    public var regions: Int
    public var steps: Int
    /// The sensor it was learnt on (nil: written before Bearing kept it; such a file is taken for its chip).
    public var sensor: SensorIdentity?

    enum CodingKeys: String, CodingKey {
        case format, chip, offset, matrix, field, baseline, time, regions, steps, sensor
        case fieldWMM = "field_wmm"
        case fieldFallback = "field_fallback"
        case misfitPercent = "misfit_percent"
        case dipSpread = "dip_spread"
    }

    public init(state: OnlineCalibrationState, chip: String?, sensor: SensorIdentity?, baseline: String?, time: String) {
        format = Self.currentFormat
        self.chip = chip
        self.sensor = sensor
        let c = state.calibration
        offset = [c.offset.x, c.offset.y, c.offset.z]
        matrix = c.matrix.rows.map { [$0.x, $0.y, $0.z] }
        field = state.field
        fieldWMM = state.fieldWMM
        fieldFallback = state.fieldFallback
        self.baseline = baseline
        self.time = time
        misfitPercent = state.misfit?.normPercent
        dipSpread = state.misfit?.dipDegrees
        regions = state.regions
        steps = state.steps
    }

    /// The correction it holds, checked: the format, finite numbers, a matrix that corrects (positive
    /// determinant, gains within 0.2…5) and a hard iron within ±2000 µT.
    public func calibration() throws(CalibrationFitError) -> MagneticCalibration {
        guard format == Self.currentFormat else { throw CalibrationFitError("format \"\(format)\" is not \"\(Self.currentFormat)\"") }
        let c = MagneticCalibration(offset: try CalibrationFileDecoding.vector(offset, "offset"), matrix: try CalibrationFileDecoding.matrix(matrix, "matrix"))
        if let problem = Self.problem(c) { throw CalibrationFitError(problem) }
        for (key, value) in [("field", field), ("field_wmm", fieldWMM), ("field_fallback", fieldFallback)] {
            if let value, !(value.isFinite && value > 0 && value < 1000) { throw CalibrationFitError("\"\(key)\" \(value) is not a field magnitude in µT") }
        }
        return c
    }

    /// Why `c` is no hard- and soft-iron correction (nil: it is one): a matrix that mirrors or collapses,
    /// gains outside 0.2…5, a hard iron beyond ±2000 µT. Online calibration puts no such fit in force.
    public static func problem(_ c: MagneticCalibration) -> String? {
        let o = c.offset, m = c.matrix
        guard [o.x, o.y, o.z].allSatisfy({ $0.isFinite && abs($0) <= 2000 }) else { return "\"offset\" \(o) is beyond ±2000 µT: not a hard iron" }
        guard m.determinant > 0 else { return "\"matrix\" has determinant \(m.determinant): it must be a correction, not a mirror or a collapse" }
        let gains = m.symmetricEigen.values
        guard gains.allSatisfy({ $0 >= 0.2 && $0 <= 5 }) else {
            return "\"matrix\" has gains \(gains.map { String(printf: "%.3g", $0) }.joined(separator: ", ")): a soft-iron correction's are within 0.2…5"
        }
        return nil
    }

    public static func decode(_ data: Data, source: String) throws(CalibrationFitError) -> OnlineCalibrationRecord {
        try CalibrationFileDecoding.decode(OnlineCalibrationRecord.self, from: data, source: source, what: "an online calibration file") { r throws(CalibrationFitError) in
            try r.calibration()
        }
    }

    public func encoded() -> Data { CalibrationFileDecoding.encode(self) }
}
