import BearingModel
import FoundationEssentials

/// A deviation curve kept in `calibration.deviation_file` (written atomically by `bearing swing`): the five
/// coefficients A..E in degrees with their standard deviations, when and how it was measured. The daemon
/// corrects the compass heading with it (NMEA's sense: magnetic = compass + deviation).
public struct DeviationRecord: Codable, Equatable, Sendable {
    public static let currentFormat = "bearing-deviation-1"

    public var format: String
    /// A, B, C, D, E, degrees, and one standard deviation of each (nil: not known, e.g. written by hand).
    public var coefficients: [Double]
    public var uncertainties: [Double]?
    /// When it was measured (UTC, ISO 8601) and how: "swing".
    public var time: String
    public var source: String
    /// The swing's water current (east, north, m/s; nil: not solved), the RMS of the curve's residuals
    /// (degrees), and the GNSS epochs it used.
    public var current: [Double]?
    public var residual: Double?
    public var epochs: Int?

    public init(result: SwingResult, time: String) {
        format = Self.currentFormat
        coefficients = result.curve.coefficients
        uncertainties = result.curve.uncertainties
        self.time = time
        source = "swing"
        current = result.currentSolved ? [result.current.east, result.current.north] : nil
        residual = result.deviationResidual
        epochs = result.used
    }

    /// A curve given by its coefficients (a curve written by hand, or another tool's), measured at `time` by `source`.
    public init(coefficients: [Double], uncertainties: [Double]? = nil, time: String, source: String, current: [Double]? = nil) {
        format = Self.currentFormat
        self.coefficients = coefficients
        self.uncertainties = uncertainties
        self.time = time
        self.source = source
        self.current = current
    }

    /// The curve it holds, checked: the format, five finite coefficients within ±45°.
    public func curve() throws(CalibrationFitError) -> DeviationCurve {
        guard format == Self.currentFormat else { throw CalibrationFitError("format \"\(format)\" is not \"\(Self.currentFormat)\"") }
        let curve = DeviationCurve(coefficients: coefficients, uncertainties: uncertainties)
        if let problem = curve.problem { throw CalibrationFitError("\"coefficients\": \(problem)") }
        if let u = uncertainties, u.count != 5 || !u.allSatisfy({ $0.isFinite && $0 >= 0 }) {
            throw CalibrationFitError("\"uncertainties\" \(u): five standard deviations, finite and not negative")
        }
        return curve
    }

    public static func decode(_ data: Data, source: String) throws(CalibrationFitError) -> DeviationRecord {
        try CalibrationFileDecoding.decode(DeviationRecord.self, from: data, source: source, what: "a deviation file") { r throws(CalibrationFitError) in
            try r.curve()
        }
    }

    public func encoded() -> Data { CalibrationFileDecoding.encode(self) }
}
