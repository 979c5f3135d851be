import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// The distortion model a calibration corrects.
public enum CalibrationModel: String, Codable, Sendable, CaseIterable {
    /// Hard-iron offset and a full symmetric soft-iron matrix (the Li–Griffiths fit).
    case ellipsoid
    /// Offset and one scale per axis: soft iron without cross-axis terms.
    case axes
    /// Offset only (hard iron).
    case sphere
    /// A 2-D fit in the one plane the samples span (the device was only turned flat). Heading is right
    /// only while the device is level in that plane; dip and field magnitude are not calibrated.
    case planar

    /// Fewest samples the model needs after outlier rejection.
    var minimumSamples: Int {
        switch self {
        case .ellipsoid: return 15
        case .axes: return 10
        case .sphere: return 6
        case .planar: return 8
        }
    }
}

/// The calibration quality figures. The first four are MotionCal's, with its thresholds as the bar.
public struct CalibrationFigures: Equatable, Sendable {
    /// Coverage gaps over 100 equal-area regions: 1 per empty region, 0.2 per region with one sample,
    /// 0.01 per region with two (MotionCal's scoring). 0 = every region has three or more.
    public var gaps: Double
    /// Spread of the calibrated magnitude: standard deviation / mean, %.
    public var variance: Double
    /// Offset of the region-averaged calibrated points from the ideal sphere, % of the radius.
    public var wobble: Double
    /// RMS of (|calibrated| − field) / field, %.
    public var fitError: Double
    /// Estimated RMS heading error of a level full turn due to the calibration, degrees: the spread of
    /// the headings given by fits to different halves of the samples.
    public var headingError: Double
    /// Regions (of 100) holding at least one sample.
    public var regionsCovered: Int

    public init(gaps: Double, variance: Double, wobble: Double, fitError: Double, headingError: Double, regionsCovered: Int) {
        self.gaps = gaps
        self.variance = variance
        self.wobble = wobble
        self.fitError = fitError
        self.headingError = headingError
        self.regionsCovered = regionsCovered
    }

    public static let maximumGaps = 15.0
    public static let maximumVariance = 4.5
    public static let maximumWobble = 4.0
    public static let maximumFitError = 5.0

    /// The figures that miss MotionCal's bar, e.g. `["gaps 23.4 ≥ 15"]`.
    public var failures: [String] {
        var f: [String] = []
        if !(gaps < Self.maximumGaps) { f.append("gaps \(Self.format(gaps)) ≥ \(Self.format(Self.maximumGaps))") }
        if !(variance < Self.maximumVariance) { f.append("variance \(Self.format(variance))% ≥ \(Self.format(Self.maximumVariance))%") }
        if !(wobble < Self.maximumWobble) { f.append("wobble \(Self.format(wobble))% ≥ \(Self.format(Self.maximumWobble))%") }
        if !(fitError < Self.maximumFitError) { f.append("fit error \(Self.format(fitError))% ≥ \(Self.format(Self.maximumFitError))%") }
        return f
    }

    public var passes: Bool { failures.isEmpty }

    static func format(_ v: Double) -> String {
        let r = (v * 10).rounded() / 10
        return r == r.rounded() ? String(Int(r)) : String(r)
    }
}

/// A calibration fitted to raw samples, with what it rests on.
public struct CalibrationFit: Sendable {
    /// `calibrated = matrix · (raw − offset)`, in the input's units.
    public var calibration: MagneticCalibration
    public var model: CalibrationModel
    /// The magnitude calibrated data is scaled to (the horizontal field for a planar fit).
    public var field: Double
    public var figures: CalibrationFigures
    /// Samples given, samples the final fit used, samples rejected as outliers.
    public var samples: Int
    public var used: Int
    public var outliers: Int
    /// Semi-axes of the fitted ellipsoid (ellipse for planar), input units, ascending.
    public var radii: [Double]
    /// Region counts of the calibrated samples (for the coverage display).
    public var regionCounts: [Int]
    /// Plain-language cautions: a smaller model than asked for, planar data, many outliers.
    public var warnings: [String]

    public init(calibration: MagneticCalibration, model: CalibrationModel, field: Double, figures: CalibrationFigures,
                samples: Int, used: Int, outliers: Int, radii: [Double], regionCounts: [Int], warnings: [String]) {
        self.calibration = calibration
        self.model = model
        self.field = field
        self.figures = figures
        self.samples = samples
        self.used = used
        self.outliers = outliers
        self.radii = radii
        self.regionCounts = regionCounts
        self.warnings = warnings
    }
}

public struct CalibrationFitError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Fits hard- and soft-iron calibrations to raw magnetometer samples and grades them.
///
/// The order of work: drop non-finite samples; a first full fit (or the largest model the spread of
/// the data supports) gives directions, which thin out clusters (a device lying still for a minute
/// must not outweigh the turns); outliers beyond 4 robust standard deviations of the radial residual
/// are dropped and the fit repeated (at most three rounds, at most a fifth of the samples); a fit that
/// comes out wild (axes more than 3.5 : 1, centre far outside the data) is replaced by the next smaller
/// model. Samples that span only a plane get the 2-D fit, flagged; samples that span less than that
/// are refused.
public struct MagnetometerCalibrator: Sendable {
    public struct Options: Sendable {
        /// The local field magnitude (WMM at the position), input units; nil scales to the fitted radius.
        public var field: Double?
        /// The local inclination, degrees, for the heading-error estimate (60° when unknown).
        public var inclination: Double?
        /// The direction that is down when the device is level, in the samples' axes.
        public var down: Vector3 = Vector3(0, 0, 1)
        /// Fit exactly this model instead of choosing.
        public var model: CalibrationModel?
        public init(field: Double? = nil, inclination: Double? = nil, model: CalibrationModel? = nil) {
            self.field = field
            self.inclination = inclination
            self.model = model
        }
    }

    public var options: Options
    public init(options: Options = Options()) { self.options = options }

    /// Thinness of the sample cloud: √(smallest / largest variance along its principal axes). 1 for a
    /// sphere, 0.5 for a hemisphere, about 0.14 for turns tilted no more than ±10°, ≈ 0 for a flat turn.
    public static func thinness(_ points: [Vector3]) -> (value: Double, normal: Vector3, axes: [Vector3]) {
        let (values, vectors) = spread(points)
        guard values[2] > 0 else { return (0, vectors[0], vectors) }
        return ((max(0, values[0]) / values[2]).squareRoot(), vectors[0], vectors)
    }

    /// Whether the cloud spans two directions at all: √(middle / largest variance) at least `lineThinness`.
    /// A ring turned exactly level (thinness 0) is a plane; points along one direction are a line.
    public static func spansAPlane(_ points: [Vector3]) -> Bool {
        let (values, _) = spread(points)
        return values[2] > 0 && (max(0, values[1]) / values[2]).squareRoot() >= lineThinness
    }

    /// Below this `thinness` a cloud is a line unless `spansAPlane`.
    static let lineThinness = 0.005

    /// The covariance's eigenvalues (ascending) and eigenvectors.
    private static func spread(_ points: [Vector3]) -> (values: [Double], vectors: [Vector3]) {
        let mean = Vector3.mean(points)
        var c = [Double](repeating: 0, count: 6)
        for p in points {
            let d = p - mean
            c[0] += d.x * d.x; c[1] += d.y * d.y; c[2] += d.z * d.z
            c[3] += d.x * d.y; c[4] += d.x * d.z; c[5] += d.y * d.z
        }
        let m = Matrix3([c[0], c[3], c[4]], [c[3], c[1], c[5]], [c[4], c[5], c[2]])
        let (values, vectors) = m.symmetricEigen
        return (values, vectors)
    }

    /// Points thinner than this (`thinness`) span a plane: `supportedModel`'s planar range.
    public static let planarThinness = 0.15

    /// The model the spread of the data supports.
    static func supportedModel(thinness t: Double, spansAPlane: Bool) -> CalibrationModel? {
        switch t {
        case 0.35...: return .ellipsoid
        case 0.25..<0.35: return .axes
        case planarThinness..<0.25: return .sphere
        case lineThinness..<planarThinness: return .planar
        default: return spansAPlane ? .planar : nil
        }
    }

    /// The fewest samples `fit` takes: those of the smallest fit it makes (a turn's planar one).
    public static let fewestSamples = CalibrationModel.planar.minimumSamples

    public func fit(_ raw: [Vector3]) throws(CalibrationFitError) -> CalibrationFit {
        let finite = raw.filter(\.isFinite)
        guard finite.count >= Self.fewestSamples else {
            throw CalibrationFitError("\(finite.count) usable samples; a calibration needs at least \(Self.fewestSamples), and a full one hundreds turned through every orientation")
        }
        if let f = options.field, !(f > 0 && f.isFinite) {
            throw CalibrationFitError("the local field must be a positive number, got \(f)")
        }
        let shape = Self.thinness(finite)
        var warnings: [String] = []
        let wanted: CalibrationModel
        if let forced = options.model {
            wanted = forced
        } else {
            guard let supported = Self.supportedModel(thinness: shape.value, spansAPlane: Self.spansAPlane(finite)) else {
                throw CalibrationFitError("the samples lie along a line (thinness \(String(printf: "%.3f", shape.value))): the device was hardly turned; turn it through a full circle, then tilt and roll it")
            }
            wanted = supported
        }
        var model = wanted
        while true {
            if let fit = fitWithRejection(finite, model: model, normal: shape.normal) {
                if model != wanted {
                    warnings.append("a \(wanted.rawValue) fit came out implausible; fell back to \(model.rawValue)")
                }
                if model == .planar {
                    warnings.append("the samples span only a plane (thinness \(String(printf: "%.3f", shape.value))): 2-D fit, right only while the device turns level; tilt and roll it for a full calibration")
                } else if options.model == nil && model != .ellipsoid {
                    warnings.append("too little tilt for a full soft-iron fit (thinness \(String(printf: "%.2f", shape.value)), 0.35 needed): \(model.rawValue) model only")
                }
                var result = fit
                result.warnings = warnings + fit.warnings
                return result
            }
            guard let smaller = Self.smaller(than: model), options.model == nil else {
                throw CalibrationFitError("no plausible \(model.rawValue) fit to these \(finite.count) samples: the data do not lie on an ellipsoid (check units and columns, and that the device was turned, not just moved)")
            }
            model = smaller
        }
    }

    static func smaller(than model: CalibrationModel) -> CalibrationModel? {
        switch model {
        case .ellipsoid: return .axes
        case .axes: return .sphere
        case .sphere, .planar: return nil
        }
    }

    /// Ellipsoid or ellipse parameters before scaling to a field: centre and shape with
    /// (x − c)ᵀ Q (x − c) = 1; for planar, Q is singular along the normal.
    struct Geometry {
        var center: Vector3
        var shape: Matrix3
        var normal: Vector3?
    }

    func geometry(_ points: [Vector3], model: CalibrationModel, normal: Vector3) -> Geometry? {
        switch model {
        case .ellipsoid, .axes, .sphere:
            let terms: QuadricFit.Terms = model == .ellipsoid ? .full : (model == .axes ? .axes : .sphere)
            guard let e = QuadricFit.ellipsoid(points, terms: terms) else { return nil }
            return Geometry(center: e.center, shape: e.shape, normal: nil)
        case .planar:
            let n = normal.normalized
            let (e1, e2) = n.perpendicularBasis
            guard let e = QuadricFit.ellipse(points.map { ($0.dot(e1), $0.dot(e2)) }) else { return nil }
            let center = e1 * e.center.0 + e2 * e.center.1
            // Q = E·[[s00, s01, 0], [s01, s11, 0], [0, 0, 0]]·Eᵀ with E = [e1 e2 n].
            let cols = [e1, e2]
            let s = [[e.s00, e.s01], [e.s01, e.s11]]
            var q = Matrix3([0, 0, 0], [0, 0, 0], [0, 0, 0])
            for i in 0..<2 {
                for j in 0..<2 {
                    let a = cols[i], b = cols[j], w = s[i][j]
                    q = q + Matrix3(rows: [b * (a.x * w), b * (a.y * w), b * (a.z * w)])
                }
            }
            return Geometry(center: center, shape: q, normal: n)
        }
    }

    /// The calibration from a geometry: `matrix = R · √Q` (in-plane only for planar, with the normal
    /// axis passed through at the in-plane gain) and the field R.
    func calibration(_ g: Geometry) -> Solution? {
        let (values, vectors) = g.shape.symmetricEigen
        if let n = g.normal {
            let inPlane = values.enumerated().filter { abs(vectors[$0.offset].dot(n)) < 0.5 }.map(\.element)
            guard inPlane.count == 2, inPlane.allSatisfy({ $0 > 0 }) else { return nil }
            let radii = inPlane.map { 1 / $0.squareRoot() }.sorted()
            let natural = (radii[0] * radii[1]).squareRoot()
            let inclination = (options.inclination ?? 60) * .pi / 180
            let target = options.field.map { $0 * cos(inclination) } ?? natural
            let gain = target / natural
            let sqrtQ = g.shape.symmetricFunction { $0 > 0 ? $0.squareRoot() : 0 }
            let normalPart = Matrix3(rows: [n * (n.x * gain), n * (n.y * gain), n * (n.z * gain)])
            // The turns were level, so the plane they span is the level plane: rotate it onto the plane
            // normal to `down` (a soft iron that mixes axes tilts it).
            let down = options.down.normalized
            let level = Self.rotation(from: n.dot(down) >= 0 ? n : -n, to: down)
            return Solution(calibration: MagneticCalibration(offset: g.center, matrix: level * (sqrtQ * target + normalPart)),
                            field: target, radii: radii, normal: n)
        }
        guard values.allSatisfy({ $0 > 0 }) else { return nil }
        let radii = values.map { 1 / $0.squareRoot() }.sorted()
        let natural = pow(radii[0] * radii[1] * radii[2], 1.0 / 3)
        let target = options.field ?? natural
        let sqrtQ = g.shape.symmetricFunction { $0.squareRoot() }
        return Solution(calibration: MagneticCalibration(offset: g.center, matrix: sqrtQ * target), field: target, radii: radii, normal: nil)
    }

    /// The smallest rotation taking unit vector `a` onto unit vector `b` (Rodrigues).
    static func rotation(from a: Vector3, to b: Vector3) -> Matrix3 {
        let v = a.cross(b), c = a.dot(b)
        guard c > -0.999999 else { return .identity }   // unreachable: callers pass a·b ≥ 0
        let k = Matrix3([0, -v.z, v.y], [v.z, 0, -v.x], [-v.y, v.x, 0])
        return .identity + k + (k * k) * (1 / (1 + c))
    }

    /// Whether a fit is believable: moderate soft iron and a centre near the data (whose mean is `mean`).
    static func plausible(_ radii: [Double], center: Vector3, mean: Vector3) -> Bool {
        guard let lo = radii.first, let hi = radii.last, lo > 0, hi / lo <= 3.5 else { return false }
        return (center - mean).length <= 3 * hi
    }

    /// A calibration scaled to `field`, the radii it rests on, and the plane normal of a planar fit.
    struct Solution {
        var calibration: MagneticCalibration
        var field: Double
        var radii: [Double]
        var normal: Vector3?
    }

    /// One fit of one model: the algebraic fit, then (for the 3-D models) a Levenberg–Marquardt
    /// refinement of the radial distance, which removes most of the algebraic fit's bias at high noise.
    func solve(_ points: [Vector3], model: CalibrationModel, normal: Vector3) -> Solution? {
        guard let g = geometry(points, model: model, normal: normal), var solution = calibration(g) else { return nil }
        var mean = Vector3.mean(points)
        // A planar fit finds the centre in the plane only (its part along the normal is left at 0): the data's
        // distance from that plane, the hard iron's part along the normal and the field's, is not the fit's to judge.
        if let n = g.normal { mean = mean - n * mean.dot(n) }
        guard Self.plausible(solution.radii, center: g.center, mean: mean) else { return nil }
        if model != .planar, let refined = Self.refine(points, solution.calibration, field: solution.field, model: model) {
            let sv = (refined.matrix.transposed * refined.matrix).symmetricEigen.values.map { $0.squareRoot() }
            guard sv.allSatisfy({ $0 > 0 }) else { return solution }
            let radii = sv.map { solution.field / $0 }.sorted()
            if Self.plausible(radii, center: refined.offset, mean: mean) {
                solution.calibration = refined
                solution.radii = radii
            }
        }
        return solution
    }

    /// Minimises Σ(|W·(x − c)| − field)² over the offset c and the model's part of the symmetric W.
    static func refine(_ points: [Vector3], _ start: MagneticCalibration, field: Double, model: CalibrationModel) -> MagneticCalibration? {
        // Parameters: c (3), then W as (w00, w11, w22, w12, w02, w01) for the ellipsoid, the diagonal for
        // axes, one scale for the sphere.
        let m = start.matrix.rows
        var p: [Double] = [start.offset.x, start.offset.y, start.offset.z]
        switch model {
        case .ellipsoid: p += [m[0].x, m[1].y, m[2].z, (m[1].z + m[2].y) / 2, (m[0].z + m[2].x) / 2, (m[0].y + m[1].x) / 2]
        case .axes: p += [m[0].x, m[1].y, m[2].z]
        case .sphere: p += [(m[0].x + m[1].y + m[2].z) / 3]
        case .planar: return nil
        }
        let np = p.count
        func unpack(_ p: [Double]) -> MagneticCalibration {
            let w: Matrix3
            switch np {
            case 9: w = Matrix3([p[3], p[8], p[7]], [p[8], p[4], p[6]], [p[7], p[6], p[5]])
            case 6: w = Matrix3([p[3], 0, 0], [0, p[4], 0], [0, 0, p[5]])
            default: w = Matrix3.identity * p[3]
            }
            return MagneticCalibration(offset: Vector3(p[0], p[1], p[2]), matrix: w)
        }
        func cost(_ c: MagneticCalibration) -> Double {
            let w = c.matrix.rows, o = c.offset
            let (w0, w1, w2) = (w[0], w[1], w[2])
            var s = 0.0
            for x in points {
                let d = x - o
                let r = Vector3(w0.dot(d), w1.dot(d), w2.dot(d)).length - field
                s += r * r
            }
            return s
        }
        var current = cost(unpack(p))
        var damping = 1e-6
        for _ in 0..<20 {
            let c = unpack(p)
            var jtj = DenseMatrix(rows: np, columns: np)
            var jtr = DenseMatrix(rows: np, columns: 1)
            Self.accumulateNormalEquations(points, c, field: field, parameters: np, jtj: &jtj.values, jtr: &jtr.values)
            for i in 0..<np { for j in 0..<i { jtj[i, j] = jtj[j, i] } }
            var improved = false
            while damping < 1e6 {
                var a = jtj
                for i in 0..<np { a[i, i] += damping * max(jtj[i, i], 1e-300) }
                guard let step = a.solve(jtr) else { damping *= 10; continue }
                let trial = zip(p, step.column(0)).map { $0 - $1 }
                let trialCost = cost(unpack(trial))
                if trialCost.isFinite && trialCost < current {
                    let relative = (current - trialCost) / max(current, 1e-300)
                    p = trial
                    current = trialCost
                    damping = max(damping / 10, 1e-12)
                    improved = relative > 1e-12
                    break
                }
                damping *= 10
            }
            if !improved { break }
        }
        let result = unpack(p)
        return result.matrix.determinant > 0 ? result : nil
    }

    /// Adds each sample's Jacobian row J (of |W·(x − c)| − field, over the parameters `refine` orders) to
    /// JᵀJ and Jᵀr, row-major with `parameters` (9, 6 or 4) columns. The whole square, though symmetric:
    /// rows of a fixed length vectorise, a triangle's do not.
    private static func accumulateNormalEquations(_ points: [Vector3], _ c: MagneticCalibration, field: Double, parameters np: Int,
                                                  jtj: inout [Double], jtr: inout [Double]) {
        precondition(jtj.count == np * np && jtr.count == np)
        // A literal count lets the compiler unroll the products.
        switch np {
        case 9: accumulateNormalEquations(points, c, field: field, count: 9, jtj: &jtj, jtr: &jtr)
        case 6: accumulateNormalEquations(points, c, field: field, count: 6, jtj: &jtj, jtr: &jtr)
        case 4: accumulateNormalEquations(points, c, field: field, count: 4, jtj: &jtj, jtr: &jtr)
        default: preconditionFailure("refine has 9, 6 or 4 parameters, not \(np)")
        }
    }

    @inline(__always)
    private static func accumulateNormalEquations(_ points: [Vector3], _ c: MagneticCalibration, field: Double, count np: Int,
                                                  jtj: inout [Double], jtr: inout [Double]) {
        let w = c.matrix.rows, o = c.offset
        let (w0, w1, w2) = (w[0], w[1], w[2])
        jtj.withUnsafeMutableBufferPointer { jtj in
            jtr.withUnsafeMutableBufferPointer { jtr in
                withUnsafeTemporaryAllocation(of: Double.self, capacity: 9) { row in
                    row.initialize(repeating: 0)
                    for x in points {
                        let d = x - o
                        let v = Vector3(w0.dot(d), w1.dot(d), w2.dot(d))
                        let len = v.length
                        guard len > 0 else { continue }
                        let u = v / len
                        // Wᵀu, as W's columns dotted with u.
                        row[0] = -(w0.x * u.x + w1.x * u.y + w2.x * u.z)
                        row[1] = -(w0.y * u.x + w1.y * u.y + w2.y * u.z)
                        row[2] = -(w0.z * u.x + w1.z * u.y + w2.z * u.z)
                        switch np {
                        case 9:
                            row[3] = u.x * d.x; row[4] = u.y * d.y; row[5] = u.z * d.z
                            row[6] = u.y * d.z + u.z * d.y; row[7] = u.x * d.z + u.z * d.x; row[8] = u.x * d.y + u.y * d.x
                        case 6:
                            row[3] = u.x * d.x; row[4] = u.y * d.y; row[5] = u.z * d.z
                        default:
                            row[3] = u.dot(d)
                        }
                        let r = len - field
                        for i in 0..<np {
                            let ri = row[i]
                            jtr[i] += ri * r
                            for j in 0..<np { jtj[i &* np &+ j] += ri * row[j] }
                        }
                    }
                }
            }
        }
    }

    func fitWithRejection(_ all: [Vector3], model: CalibrationModel, normal: Vector3) -> CalibrationFit? {
        guard all.count >= model.minimumSamples, var sol = solve(all, model: model, normal: normal) else { return nil }

        // Thin clusters: at most ~3× the average count per cell of a 400-cell equal-area grid.
        var points = Self.balanced(all, by: sol.calibration)
        if points.count != all.count, let s2 = solve(points, model: model, normal: normal) {
            sol = s2
        }
        var outliers = 0
        var warnings: [String] = []
        for _ in 0..<3 {
            let residuals = points.map { radialResidual($0, sol.calibration, field: sol.field, normal: sol.normal) }
            var scratch = residuals
            let median = Self.kthSmallest(&scratch, residuals.count / 2)
            for i in scratch.indices { scratch[i] = abs(residuals[i] - median) }
            let mad = Self.kthSmallest(&scratch, residuals.count / 2)
            let limit = max(4 * 1.4826 * mad, 0.01)
            let keep = points.indices.filter { abs(residuals[$0] - median) <= limit }
            if keep.count == points.count { break }
            if outliers + points.count - keep.count > all.count / 5 {
                warnings.append("many samples far off the fitted surface; stopped rejecting at \(outliers) outliers")
                break
            }
            let kept = keep.map { points[$0] }
            guard kept.count >= model.minimumSamples, let s2 = solve(kept, model: model, normal: normal) else { break }
            outliers += points.count - kept.count
            points = kept
            sol = s2
        }
        let (figures, counts) = grade(points, sol.calibration, field: sol.field, model: model, normal: sol.normal)
        return CalibrationFit(calibration: sol.calibration, model: model, field: sol.field, figures: figures,
                              samples: all.count, used: points.count, outliers: outliers, radii: sol.radii,
                              regionCounts: counts, warnings: warnings)
    }

    /// The value at `k` of `values.sorted()`, found by quickselect (Hoare partitions, median-of-three
    /// pivots) instead of a sort; `values` comes back reordered.
    public static func kthSmallest(_ values: inout [Double], _ k: Int) -> Double {
        precondition(values.indices.contains(k))
        return values.withUnsafeMutableBufferPointer { v in
            var lo = 0, hi = v.count - 1
            while lo < hi {
                let (a, b, c) = (v[lo], v[lo + (hi - lo) / 2], v[hi])
                let pivot = max(min(a, b), min(max(a, b), c))
                var i = lo, j = hi
                while i <= j {
                    while v[i] < pivot { i += 1 }
                    while pivot < v[j] { j -= 1 }
                    if i <= j {
                        v.swapAt(i, j)
                        i += 1
                        j -= 1
                    }
                }
                // Now v[lo...j] ≤ pivot ≤ v[i...hi], and everything between equals the pivot.
                if k <= j {
                    hi = j
                } else if k >= i {
                    lo = i
                } else {
                    return v[k]
                }
            }
            return v[k]
        }
    }

    /// (|calibrated| − field) / field; in-plane magnitude for a planar fit.
    func radialResidual(_ p: Vector3, _ c: MagneticCalibration, field: Double, normal: Vector3?) -> Double {
        var v = c.apply(p)
        if let n = normal { v = v - n * v.dot(n) }
        return v.length / field - 1
    }

    /// At most ~3× the mean count per cell of a 400-cell equal-area grid (20 bands of equal area × 20
    /// longitudes) of calibrated directions; within a crowded cell, evenly spaced samples are kept.
    static func balanced(_ points: [Vector3], by c: MagneticCalibration) -> [Vector3] {
        let cells = 400
        let cap = max(8, 3 * points.count / cells)
        var members = [[Int]](repeating: [], count: cells)
        for (i, p) in points.enumerated() {
            let v = c.apply(p)
            let r = v.length
            guard r > 0 else { continue }
            let band = min(19, max(0, Int((1 - v.z / r) / 2 * 20)))
            let lon = min(19, max(0, Int((atan2(v.y, v.x) + .pi) / (2 * .pi) * 20)))
            members[band * 20 + lon].append(i)
        }
        guard members.contains(where: { $0.count > cap }) else { return points }
        var keep: [Int] = []
        for m in members {
            if m.count <= cap { keep += m; continue }
            let step = Double(m.count) / Double(cap)
            for k in 0..<cap { keep.append(m[Int(Double(k) * step)]) }
        }
        return keep.sorted().map { points[$0] }
    }

    func grade(_ points: [Vector3], _ c: MagneticCalibration, field: Double, model: CalibrationModel, normal: Vector3?) -> (CalibrationFigures, [Int]) {
        var counts = [Int](repeating: 0, count: SphereRegions.count)
        var sums = [Vector3](repeating: .zero, count: SphereRegions.count)
        var magnitudes: [Double] = []
        magnitudes.reserveCapacity(points.count)
        var sq = 0.0
        for p in points {
            let v = c.apply(p)
            if let r = SphereRegions.region(of: v) {
                counts[r] += 1
                sums[r] = sums[r] + v
            }
            var m = v
            if let n = normal { m = m - n * m.dot(n) }
            let len = m.length
            magnitudes.append(len)
            sq += (len - field) * (len - field)
        }
        var gaps = 0.0
        for n in counts {
            switch n {
            case 0: gaps += 1
            case 1: gaps += 0.2
            case 2: gaps += 0.01
            default: break
            }
        }
        let mean = magnitudes.reduce(0, +) / Double(magnitudes.count)
        let variance = magnitudes.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(magnitudes.count)
        var wobbleSum = Vector3.zero
        var occupied = 0
        for r in 0..<SphereRegions.count where counts[r] > 0 {
            wobbleSum = wobbleSum + (sums[r] / Double(counts[r]) - SphereRegions.center(of: r) * mean)
            occupied += 1
        }
        let wobble = occupied == 0 ? 100 : (wobbleSum / Double(occupied)).length / mean * 100
        let figures = CalibrationFigures(
            gaps: gaps, variance: variance.squareRoot() / mean * 100, wobble: wobble,
            fitError: (sq / Double(points.count)).squareRoot() / field * 100,
            headingError: headingSpread(points, model: model, normal: normal),
            regionsCovered: occupied)
        return (figures, counts)
    }

    /// Fits four pairs of complementary halves of the samples and compares the headings each pair gives
    /// over a level full turn: the RMS difference of two half-data fits is about twice the error of the
    /// fit to all the data.
    func headingSpread(_ points: [Vector3], model: CalibrationModel, normal: Vector3?) -> Double {
        guard points.count >= 2 * model.minimumSamples else { return .infinity }
        let down = options.down.normalized
        let (h1, h2) = down.perpendicularBasis
        let inclination = normal == nil ? (options.inclination ?? 60) * .pi / 180 : 0
        var total = 0.0, n = 0
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<4 {
            var a: [Vector3] = [], b: [Vector3] = []
            a.reserveCapacity(points.count)
            b.reserveCapacity(points.count)
            for p in points {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                if state >> 63 == 0 { a.append(p) } else { b.append(p) }
            }
            guard let sa = solve(a, model: model, normal: normal ?? .zero), let sb = solve(b, model: model, normal: normal ?? .zero),
                  let aInverse = sa.calibration.matrix.inverse else { return .infinity }
            for k in 0..<36 {
                let theta = Double(k) * 10 * .pi / 180
                let truth = (h1 * cos(theta) + h2 * sin(theta)) * (sa.field * cos(inclination)) + down * (sa.field * sin(inclination))
                let raw = aInverse * truth + sa.calibration.offset
                let other = sb.calibration.apply(raw)
                var d = atan2(other.dot(h2), other.dot(h1)) - theta
                d = remainder(d, 2 * .pi)
                total += d * d
                n += 1
            }
        }
        return (total / Double(n)).squareRoot() * 180 / .pi / 2
    }
}
