import BearingCalibration
import BearingModel
import FoundationEssentials

/// The deviation learnt from driving, kept across restarts (`calibration.driving_file`, written atomically by
/// the daemon): each 30° sector's observations (compass heading, deviation; oldest first) and the magnetometer
/// calibration they were seen after. At start, and whenever that calibration is in force again, they are put
/// back into `PassiveDeviation`: a car whose board boots with every trip starts with its curve.
public struct DrivingDeviationRecord: Codable, Equatable, Sendable {
    public static let currentFormat = "bearing-driving-deviation-1"

    public var format: String
    /// When it was written (UTC, ISO 8601).
    public var time: String
    /// The correction in force while the observations were seen: `calibrated = matrix · (raw − offset)`, µT.
    public var offset: [Double]
    public var matrix: [[Double]]
    /// Twelve sectors of compass heading (0–30°, 30–60°, …), each a list of [compass, deviation] in degrees.
    public var sectors: [[[Double]]]
    /// The magnetometer it was learnt on (nil: written before Bearing kept it).
    public var sensor: SensorIdentity?
    /// The vehicle's forward axis learnt on the same drives (`VehicleAcceleration.forward`: a unit vector in the
    /// levelled board frame, x forward, y right, z down); nil before it was learnt, or written before Bearing kept it.
    /// It does not depend on the magnetometer's calibration, so it is put back whatever is in force. Where the headings
    /// are taken along it (`AttitudeFusion.mountingAxis`, beyond 20° from x) the sectors' compass headings are the
    /// vehicle's, not the board's x's.
    public var forward: [Double]?
    /// The vehicle's "up" learnt on the same drives (`AttitudeFusion.vehicleUp`: the mean of the board's up at speed, a
    /// unit vector in the same frame); nil before a fix at speed showed it, or written before Bearing kept it. With the
    /// forward axis it makes the vehicle's axes, whose pitch and roll ATT gives from the first sample of the next run.
    public var up: [Double]?

    public init(_ deviation: PassiveDeviation, after calibration: MagneticCalibration, time: String, forward: Vector3? = nil,
                up: Vector3? = nil) {
        format = Self.currentFormat
        self.time = time
        let o = calibration.offset
        offset = [o.x, o.y, o.z]
        matrix = calibration.matrix.rows.map { [$0.x, $0.y, $0.z] }
        sectors = deviation.observations.map { $0.map { [$0.compass, $0.deviation] } }
        self.forward = forward.map { [$0.x, $0.y, $0.z] }
        self.up = up.map { [$0.x, $0.y, $0.z] }
    }

    /// The forward axis kept, checked: three finite numbers of length 1 (within 1 %); nil when none was kept.
    public func forwardAxis() throws(CalibrationFitError) -> Vector3? { try Self.unitVector(forward, "forward") }

    /// The vehicle's "up" kept, checked as the forward axis is; nil when none was kept.
    public func upAxis() throws(CalibrationFitError) -> Vector3? { try Self.unitVector(up, "up") }

    private static func unitVector(_ v: [Double]?, _ key: String) throws(CalibrationFitError) -> Vector3? {
        guard let v else { return nil }
        let problem = CalibrationFitError("\"\(key)\" must be a unit vector: three finite numbers of length 1, not \(v)")
        guard v.count == 3, v.allSatisfy(\.isFinite) else { throw problem }
        let u = Vector3(v[0], v[1], v[2])
        guard abs(u.length - 1) <= 0.01 else { throw problem }
        return u.normalized
    }

    /// The calibration they were seen after, checked as an online calibration's is.
    public func calibration() throws(CalibrationFitError) -> MagneticCalibration {
        guard format == Self.currentFormat else { throw CalibrationFitError("format \"\(format)\" is not \"\(Self.currentFormat)\"") }
        let c = MagneticCalibration(offset: try CalibrationFileDecoding.vector(offset, "offset"), matrix: try CalibrationFileDecoding.matrix(matrix, "matrix"))
        if let problem = OnlineCalibrationRecord.problem(c) { throw CalibrationFitError(problem) }
        return c
    }

    /// The observations, checked: twelve sectors, each pair a compass heading in its sector and a deviation
    /// within `PassiveDeviation.Settings.maximumDeviation`.
    public func observations(settings: PassiveDeviation.Settings = .init()) throws(CalibrationFitError) -> [[(compass: Double, deviation: Double)]] {
        guard sectors.count == 12 else { throw CalibrationFitError("\"sectors\" has \(sectors.count) sectors, not 12 (30° each)") }
        var out: [[(compass: Double, deviation: Double)]] = []
        for (s, sector) in sectors.enumerated() {
            var kept: [(compass: Double, deviation: Double)] = []
            for (i, pair) in sector.enumerated() {
                let at = "\"sectors\"[\(s)][\(i)]"
                guard pair.count == 2, pair.allSatisfy(\.isFinite) else { throw CalibrationFitError("\(at) must be [compass, deviation]: two finite numbers") }
                guard pair[0] >= Double(30 * s), pair[0] < Double(30 * s + 30) else {
                    throw CalibrationFitError("\(at): compass heading \(pair[0])° is not in sector \(s) (\(30 * s)–\(30 * s + 30)°)")
                }
                guard abs(pair[1]) <= settings.maximumDeviation else {
                    throw CalibrationFitError("\(at): deviation \(pair[1])° is beyond ±\(settings.maximumDeviation)°")
                }
                kept.append((pair[0], pair[1]))
            }
            out.append(kept)
        }
        return out
    }

    /// Whether the observations hold under `calibration`: the one they were seen after, within a refinement
    /// (the hard iron moved by no more than `CalibrationChange.turnsTheHeading` allows, the soft iron by 1 %).
    public func holds(under calibration: MagneticCalibration, field: Double) -> Bool {
        guard let seen = try? self.calibration() else { return false }
        let rows = zip(seen.matrix.rows, calibration.matrix.rows)
        return !CalibrationChange.turnsTheHeading(offsetMoved: (seen.offset - calibration.offset).length, field: field)
            && rows.allSatisfy { a, b in let d = a - b; return max(abs(d.x), abs(d.y), abs(d.z)) <= 0.01 }
    }

    public static func decode(_ data: Data, source: String) throws(CalibrationFitError) -> DrivingDeviationRecord {
        try CalibrationFileDecoding.decode(DrivingDeviationRecord.self, from: data, source: source, what: "a driving deviation file") { r throws(CalibrationFitError) in
            _ = try r.calibration()
            _ = try r.forwardAxis()
            _ = try r.upAxis()
            return try r.observations()
        }
    }

    public func encoded() -> Data { CalibrationFileDecoding.encode(self) }
}
