import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// An accelerometer correction, `corrected = matrix · (raw − offset)` in the chip's axes and m/s²: offset,
/// and scale and axis misalignment in `matrix`. The same form as the magnetometer's hard- and soft-iron
/// correction.
public typealias AccelerometerCorrection = MagneticCalibration

/// One of the six directions of the chip's axes, named by the axis that points up (the specific force at
/// rest points up, so +z is the chip lying flat, right way up).
public enum AxisDirection: String, CaseIterable, Codable, Sendable {
    case plusX = "+x", minusX = "-x", plusY = "+y", minusY = "-y", plusZ = "+z", minusZ = "-z"

    public var vector: Vector3 {
        switch self {
        case .plusX: return Vector3(1, 0, 0)
        case .minusX: return Vector3(-1, 0, 0)
        case .plusY: return Vector3(0, 1, 0)
        case .minusY: return Vector3(0, -1, 0)
        case .plusZ: return Vector3(0, 0, 1)
        case .minusZ: return Vector3(0, 0, -1)
        }
    }

    /// How the board lies when this chip axis points up, in the board's terms (x forward, y right, z down),
    /// for a chip mounted by `orientation`: `nose up`, `on its left side`, …
    public func posture(_ orientation: Orientation) -> String {
        Self.postures[postureRank(orientation)]
    }

    /// The postures in the order a person holds them: level first.
    static let postures = ["level, right way up", "upside down", "nose up (standing on its tail)", "nose down (standing on its nose)",
                           "on its right side (left side up)", "on its left side (right side up)"]
    static let boardUp = [Vector3(0, 0, -1), Vector3(0, 0, 1), Vector3(1, 0, 0), Vector3(-1, 0, 0), Vector3(0, -1, 0), Vector3(0, 1, 0)]

    /// The place of this direction's posture in `postures`.
    public func postureRank(_ orientation: Orientation) -> Int {
        let up = orientation.toBoard(vector)
        return Self.boardUp.indices.max { Self.boardUp[$0].dot(up) < Self.boardUp[$1].dot(up) }!
    }

    /// Within this angle of an axis a pose counts as that axis up.
    public static let tolerance = 30.0

    /// The direction `v` points within `tolerance` of, if any.
    public init?(pointing v: Vector3) {
        let u = v.normalized
        guard let best = Self.allCases.max(by: { $0.vector.dot(u) < $1.vector.dot(u) }),
              best.vector.dot(u) >= cos(Self.tolerance * .pi / 180) else { return nil }
        self = best
    }
}

/// How good an accelerometer calibration is, from its own poses.
public struct AccelerometerFigures: Codable, Equatable, Sendable {
    /// Still poses the fit used.
    public var poses: Int
    /// The axis directions held (each within 30° of that axis up), and those never held.
    public var directions: [AxisDirection]
    public var missing: [AxisDirection]
    /// RMS over the poses of |corrected| − g, m/s², and in mg (thousandths of g).
    public var residual: Double
    public var residualMilliG: Double
    /// The pose farthest from g (1-based) and how far, mg: judged by the calibration the other poses give
    /// (a fit to all of them bends towards a bad pose and hides it), or by the fit itself when there are
    /// no spare poses.
    public var worstPose: Int
    public var worstMilliG: Double
    /// The offset found, mg per axis.
    public var offsetMilliG: [Double]
    /// The chip's gain error per axis, % (raw = (1 + error) · true along each axis).
    public var scaleErrorPercent: [Double]
    /// The largest non-orthogonality between two axes, degrees (0 for the axes model).
    public var misalignment: Double
    /// How well the poses pin down the model's parameters: the smallest over the largest eigenvalue of
    /// the normalised information matrix (1 for the six faces and the axes model; 0.4 for poses spread
    /// evenly over the sphere with the full model; 0 when some parameter is not determined at all).
    public var spread: Double
    /// Poses beyond the model's parameters: 0 means an exact fit, whose residual checks nothing.
    public var spareDegrees: Int

    enum CodingKeys: String, CodingKey {
        case poses, directions, missing, residual, misalignment, spread
        case residualMilliG = "residual_mg"
        case worstPose = "worst_pose"
        case worstMilliG = "worst_mg"
        case offsetMilliG = "offset_mg"
        case scaleErrorPercent = "scale_error_percent"
        case spareDegrees = "spare_degrees"
    }

    /// RMS residual and worst pose a calibration must stay within, mg, and what is plausible for a MEMS
    /// accelerometer (datasheets give offsets up to ~±150 mg and gains within a few %).
    public static let maximumResidualMilliG = 15.0
    public static let maximumWorstMilliG = 40.0
    public static let maximumOffsetMilliG = 300.0
    public static let maximumScaleErrorPercent = 10.0
}

/// An accelerometer calibration fitted to still poses, with what it rests on.
public struct AccelerometerFit: Sendable {
    public var correction: AccelerometerCorrection
    /// `axes` (offset + scale per axis: the six-position calibration) or `ellipsoid` (offset + a
    /// symmetric matrix: scale and misalignment).
    public var model: CalibrationModel
    /// The magnitude corrected readings at rest are scaled to, m/s².
    public var gravity: Double
    public var poses: [StaticPose]
    /// |corrected| − g per pose, m/s².
    public var residuals: [Double]
    /// The direction each pose held, if near an axis.
    public var poseDirections: [AxisDirection?]
    public var figures: AccelerometerFigures
    public var warnings: [String]

    /// What misses the bar: a direction the axes model needs and never got, a residual above the bar, a
    /// correction no accelerometer needs (wrong units, a pose taken while moving).
    public var failures: [String] {
        let f = figures
        var out: [String] = []
        if model == .axes && !f.missing.isEmpty {
            out.append("\(f.missing.map(\.rawValue).joined(separator: ", ")) never held up (the axes model needs each of the six faces up)")
        }
        if !(f.residualMilliG <= AccelerometerFigures.maximumResidualMilliG) {
            out.append("residual \(Self.format(f.residualMilliG)) mg RMS > \(Self.format(AccelerometerFigures.maximumResidualMilliG)) mg")
        }
        if !(f.worstMilliG <= AccelerometerFigures.maximumWorstMilliG) {
            out.append("pose \(f.worstPose) is \(Self.format(f.worstMilliG)) mg off g (> \(Self.format(AccelerometerFigures.maximumWorstMilliG)) mg): it moved or leaned")
        }
        if let worst = f.offsetMilliG.max(by: { abs($0) < abs($1) }), !(abs(worst) <= AccelerometerFigures.maximumOffsetMilliG) {
            out.append("an offset of \(Self.format(worst)) mg (> \(Self.format(AccelerometerFigures.maximumOffsetMilliG)) mg) is not an accelerometer's: check the units and the poses")
        }
        if let worst = f.scaleErrorPercent.max(by: { abs($0) < abs($1) }), !(abs(worst) <= AccelerometerFigures.maximumScaleErrorPercent) {
            out.append("a gain error of \(Self.format(worst))% (> \(Self.format(AccelerometerFigures.maximumScaleErrorPercent))%) is not an accelerometer's: check the units and the poses")
        }
        return out
    }

    public var passes: Bool { failures.isEmpty }

    static func format(_ v: Double) -> String { CalibrationFigures.format(v) }
}

/// Fits an accelerometer calibration to still poses: `|matrix · (pose − offset)| = g` for every pose.
///
/// The fit takes the poses' means, not the raw samples: a moving board senses its acceleration on top of
/// gravity, so only a board at rest reads |specific force| = g, and a pose mean also averages the noise
/// of its hundred-odd samples down tenfold. With few poses each counts for the same; a pose that was not
/// really still shows as the worst pose.
///
/// The geometry is the magnetometer's (`MagnetometerCalibrator`): Li & Griffiths' constrained ellipsoid
/// fit, then Levenberg–Marquardt on the radial distance, with the target radius g. `axes` fits an offset
/// and a gain per axis (6 parameters: the six-position calibration, one pose per face); `ellipsoid` a
/// full symmetric matrix too (9 parameters: misalignment, from at least 9 poses that include tilts
/// between the axes). A common rotation of the three axes cannot be seen from |a| at all; what of it
/// matters is left to the mounting level (`bearing level`) and `imu.rotation`.
public struct AccelerometerCalibrator: Sendable {
    public static let standardGravity = 9.80665
    /// Least `spread` for the ellipsoid model: below it the poses leave some misalignment term to noise.
    /// The six faces and six tilts between them give 0.03, twenty random poses 0.06, the six faces and
    /// three tilts 0.009, repeats of the faces 0.
    public static let minimumSpread = 0.02

    /// This model only; nil takes `ellipsoid` when the poses pin it down, else `axes`.
    public var model: CalibrationModel?
    public var gravity: Double

    public init(model: CalibrationModel? = nil, gravity: Double = standardGravity) {
        self.model = model
        self.gravity = gravity
    }

    static func parameters(_ model: CalibrationModel) -> Int { model == .ellipsoid ? 9 : 6 }

    public func fit(_ poses: [StaticPose]) throws(CalibrationFitError) -> AccelerometerFit {
        if let model, model != .axes && model != .ellipsoid {
            throw CalibrationFitError("an accelerometer is fitted with the axes or the ellipsoid model, not \(model.rawValue)")
        }
        let points = poses.map(\.specificForce)
        guard points.count >= 6, points.allSatisfy(\.isFinite) else {
            throw CalibrationFitError("\(points.count) still pose\(points.count == 1 ? "" : "s"); a calibration needs at least 6 (each face of the board up in turn, held still for a second or two)")
        }
        var warnings: [String] = []
        let wanted: CalibrationModel
        if let model {
            wanted = model
            if model == .ellipsoid {
                guard points.count >= 9 else {
                    throw CalibrationFitError("\(points.count) poses; the ellipsoid model needs at least 9 (the six faces and tilts between them)")
                }
            }
        } else {
            wanted = points.count >= 9 ? .ellipsoid : .axes
        }
        var chosen = wanted
        var solution = solve(points, model: chosen)
        if chosen == .ellipsoid, let s = solution, s.spread < Self.minimumSpread {
            let why = "the poses do not pin down the misalignment (spread \(Self.rounded(s.spread, 3)) < \(Self.minimumSpread)): hold tilts between the axes too"
            guard model == nil else { throw CalibrationFitError("ellipsoid model: \(why)") }
            warnings.append("axes model: \(why)")
            chosen = .axes
            solution = solve(points, model: .axes)
        } else if chosen == .ellipsoid, solution == nil, model == nil {
            warnings.append("no plausible ellipsoid fit; fell back to the axes model")
            chosen = .axes
            solution = solve(points, model: .axes)
        }
        guard let solution else {
            throw CalibrationFitError("no plausible \(chosen.rawValue) fit to these \(points.count) poses: their means do not lie on a sphere of radius g (check that the readings are m/s², and that each pose was held still)")
        }
        let spare = points.count - Self.parameters(chosen)
        if spare == 0 {
            warnings.append("\(points.count) poses for \(Self.parameters(chosen)) parameters: an exact fit, whose residual checks nothing; hold one or two more poses (any tilt) to check it")
        }
        return result(poses, solution: solution, model: chosen, warnings: warnings)
    }

    /// |corrected| − g of each pose under the calibration fitted to the other poses; nil without a spare pose.
    func leaveOneOut(_ points: [Vector3], model: CalibrationModel) -> [Double]? {
        guard points.count > Self.parameters(model) else { return nil }
        var out: [Double] = []
        for i in points.indices {
            var others = points
            others.remove(at: i)
            guard let s = solve(others, model: model) else { return nil }
            out.append(s.correction.apply(points[i]).length - gravity)
        }
        return out
    }

    struct Solution {
        var correction: AccelerometerCorrection
        var spread: Double
    }

    func solve(_ points: [Vector3], model: CalibrationModel) -> Solution? {
        let geometry = MagnetometerCalibrator(options: .init(field: gravity, model: model))
        guard let s = geometry.solve(points, model: model, normal: .zero) else { return nil }
        let directions = points.map { s.calibration.apply($0).normalized }
        return Solution(correction: s.calibration, spread: Self.spread(directions, model: model))
    }

    /// The smallest over the largest eigenvalue of the information matrix of the radial residual's
    /// parameters (offset, then the matrix's diagonal, then its off-diagonal terms for the ellipsoid), at
    /// the corrected directions `u`: per pose the Jacobian row (−u, u_x², u_y², u_z²[, 2u_y·u_z, 2u_x·u_z,
    /// 2u_x·u_y]), the matrix terms scaled by g so that all columns are in m/s².
    static func spread(_ u: [Vector3], model: CalibrationModel) -> Double {
        let n = parameters(model)
        var information = DenseMatrix(rows: n, columns: n)
        for d in u {
            var row = [-d.x, -d.y, -d.z, d.x * d.x, d.y * d.y, d.z * d.z]
            if n == 9 { row += [2 * d.y * d.z, 2 * d.x * d.z, 2 * d.x * d.y] }
            for i in 0..<n { for j in 0..<n { information[i, j] += row[i] * row[j] } }
        }
        let values = information.symmetricEigen().values
        guard let top = values.last, top > 0 else { return 0 }
        return max(0, values[0]) / top
    }

    func result(_ poses: [StaticPose], solution: Solution, model: CalibrationModel, warnings: [String]) -> AccelerometerFit {
        let c = solution.correction
        let corrected = poses.map { c.apply($0.specificForce) }
        let residuals = corrected.map { $0.length - gravity }
        let directions = corrected.map { AxisDirection(pointing: $0) }
        let held = Set(directions.compactMap { $0 })
        let milliG = 1000 / Self.standardGravity
        let judged = leaveOneOut(poses.map(\.specificForce), model: model) ?? residuals
        var worst = 0
        for i in judged.indices where abs(judged[i]) > abs(judged[worst]) { worst = i }
        let rms = (residuals.reduce(0) { $0 + $1 * $1 } / Double(residuals.count)).squareRoot()
        // The chip's own distortion is the inverse of the correction: raw = A·true + offset.
        let a = c.matrix.inverse ?? .identity
        let rows = a.rows
        let diagonal = [rows[0].x, rows[1].y, rows[2].z]
        let offDiagonal = [(rows[0].y + rows[1].x) / 2, (rows[0].z + rows[2].x) / 2, (rows[1].z + rows[2].y) / 2]
        let figures = AccelerometerFigures(
            poses: poses.count,
            directions: AxisDirection.allCases.filter(held.contains),
            missing: AxisDirection.allCases.filter { !held.contains($0) },
            residual: rms, residualMilliG: rms * milliG,
            worstPose: worst + 1, worstMilliG: abs(judged[worst]) * milliG,
            offsetMilliG: [c.offset.x, c.offset.y, c.offset.z].map { $0 * milliG },
            scaleErrorPercent: diagonal.map { ($0 - 1) * 100 },
            // An off-diagonal term ε turns two axes towards each other by 2ε radians in all.
            misalignment: (offDiagonal.map { abs($0) }.max() ?? 0) * 2 * 180 / .pi,
            spread: solution.spread,
            spareDegrees: poses.count - Self.parameters(model))
        return AccelerometerFit(correction: c, model: model, gravity: gravity, poses: poses, residuals: residuals,
                                poseDirections: directions, figures: figures, warnings: warnings)
    }

    static func rounded(_ v: Double, _ places: Int) -> String { String(v.rounded(toPlaces: places)) }
}
