import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// Where the magnetometer calibration in force came from.
public enum CalibrationOrigin: String, Codable, Sendable {
    case none, manual, auto
}

/// How online calibration samples, fits and decides.
public struct OnlineCalibrationSettings: Equatable, Sendable {
    /// Seconds between samples taken into the point set (the rest only feed the step detector).
    public var sampleInterval = 0.1
    /// Seconds between fits.
    public var fitInterval = 10.0
    /// Regions (of `SphereRegions.count`, by field direction) that must hold a point before a fit; or, for
    /// a vehicle that only turns (the field's directions a ring), `minimumTurnRegions` with the horizontal
    /// field in `minimumSectors` of 12 heading sectors.
    public var minimumRegions = 24
    public var minimumTurnRegions = 8
    public var minimumSectors = 9
    /// Seconds a region's point is kept without a fresh sample.
    public var maximumAge = 1800.0
    /// Weight of a new sample in its region's point (an exponential mean: old samples fade, none dominates).
    public var pointWeight = 0.125
    /// A sample is suspect when its calibrated magnitude is off the field by more than this fraction, or its
    /// dip by more than `dipDisturbance` degrees.
    public var normDisturbance = 0.08
    public var dipDisturbance = 6.0
    /// Seconds a disturbance must last, unbroken, to be taken as a step of the hard iron rather than a
    /// passing one (a truck, a bridge).
    public var stepTime = 10.0
    /// Regions that must hold a point for a fit of the hard iron alone, after a step (the soft iron stays).
    public var minimumStepRegions = 10
    /// Seconds a disturbance must last before earlier calibrations are tried on it (a magnet taken away
    /// again), and how many earlier calibrations are kept.
    public var recallTime = 2.0
    public var recallDepth = 4
    /// A new fit replaces the one in force only when its misfit on the same points is below `acceptRatio`
    /// times the old one's and lower by at least `acceptMargin` (hysteresis: no flip-flopping).
    public var acceptRatio = 0.8
    public var acceptMargin = 0.3

    public init() {}
}

/// How well a calibration explains a set of field points: the spread of the calibrated magnitude (% of its
/// mean) plus, where gravity is known, the spread of the dip (degrees). Both are zero for a perfect one.
public struct CalibrationMisfit: Equatable, Sendable {
    public var normPercent: Double
    public var dipDegrees: Double
    /// The mean dip, degrees (down positive), and the mean magnitude.
    public var meanDip: Double
    public var meanNorm: Double
    public var total: Double { normPercent + dipDegrees }
}

/// A change of the calibration in force, for the journal: what changed, by how much and why.
public struct CalibrationChange: Equatable, Sendable {
    public var calibration: MagneticCalibration
    public var before: CalibrationMisfit
    public var after: CalibrationMisfit
    public var regions: Int
    /// How far the hard iron moved, in the field's units.
    public var offsetMoved: Double
    /// Whether a step (a persistent disturbance) started the learning that gave it.
    public var afterStep: Bool
    /// Whether it is an earlier calibration put back in force (the disturbance that replaced it went away).
    public var recalled = false

    /// One line for the journal: what changed, by how much, and why it was taken.
    public var summary: String {
        let why = recalled ? "an earlier calibration explains the field again (the disturbance that replaced it is gone)"
            : "\(afterStep ? "after a step of the hard iron, " : "")a fit on \(regions) directions explains them better"
        return String(printf: "magnetometer calibration changed: hard iron moved %.1f, misfit %.1f %% + %.1f° → %.1f %% + %.1f°: ",
                      offsetMoved, before.normPercent, before.dipDegrees, after.normPercent, after.dipDegrees) + why
    }
}

/// Hard- and soft-iron calibration learnt while the vehicle moves. Each field sample (with the fused "up"
/// in the sensor frame) updates a bounded set of points, one per direction region, each an exponential
/// mean aged out after `maximumAge`. Every `fitInterval` the calibrator (`MagnetometerCalibrator`: the
/// ellipsoid where the attitude spread allows, smaller models otherwise) is fitted to the points, and the
/// fit replaces the one in force only if it explains the same points clearly better (`acceptRatio`,
/// `acceptMargin`). A disturbance of magnitude or dip that lasts `stepTime` is a step (a magnet attached,
/// a new battery): the points from before it are dropped and learning starts again from the samples of the
/// disturbance; a shorter one is a passing disturbance, and its samples are never learnt.
/// Pure: no clock of its own, no I/O; `add` is cheap, `fit` is the expensive part, to be run off the
/// per-sample path.
public struct OnlineMagnetometerCalibration: Sendable {
    public let settings: OnlineCalibrationSettings
    public private(set) var inForce: MagneticCalibration
    public private(set) var origin: CalibrationOrigin
    /// The magnitude calibrated fields are scaled to (WMM's at the fix when known; else the first fit's).
    public private(set) var field: Double?
    /// Whether every sample is being learnt (no calibration yet, or since a step), rather than only those
    /// the calibration in force finds undisturbed.
    public private(set) var learning: Bool
    public private(set) var steps = 0
    /// The misfit of the calibration in force on the points when it was last judged.
    public private(set) var misfit: CalibrationMisfit?

    struct Point {
        var raw: Vector3
        var up: Vector3?
        var time: Double
    }
    private var points: [Point?] = Array(repeating: nil, count: SphereRegions.count)
    /// Samples of a disturbance that may turn out to be a step (at most one per `sampleInterval`).
    private var pending: [(raw: Vector3, up: Vector3?)] = []
    private var disturbedSince: Double?
    private var lastTaken = -Double.infinity
    private var lastFit: Double?
    private var afterStep = false
    /// Calibrations in force earlier, newest last (the one at the start among them).
    private var earlier: [MagneticCalibration] = []

    /// `calibration` is the one in force at the start (a manual one is the baseline that tracking refines);
    /// `field` the expected magnitude in the samples' units, when known.
    public init(calibration: MagneticCalibration?, origin: CalibrationOrigin, field: Double? = nil,
                settings: OnlineCalibrationSettings = OnlineCalibrationSettings()) {
        self.settings = settings
        inForce = calibration ?? .identity
        self.origin = calibration == nil ? .none : origin
        self.field = field
        learning = calibration == nil
    }

    /// Regions holding a point.
    public var regions: Int { points.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// Takes one raw sample (`up`: the unit "up" in the sensor frame from the fused attitude, nil before
    /// the filter has one) at `time` seconds. Returns the change when it put an earlier calibration back.
    @discardableResult
    public mutating func add(_ raw: Vector3, up: Vector3?, time: Double) -> CalibrationChange? {
        guard raw.isFinite, raw != .zero else { return nil }
        if !learning, let field {
            let c = inForce.apply(raw)
            let n = c.length
            var disturbed = abs(n / field - 1) > settings.normDisturbance
            if !disturbed, let up, let dip = misfit?.meanDip {
                disturbed = abs(Self.dip(c, up) - dip) > settings.dipDisturbance
            }
            if disturbed {
                let since = disturbedSince ?? time
                disturbedSince = since
                if time - lastTaken >= settings.sampleInterval, pending.count < 4096 {
                    pending.append((raw, up))
                    lastTaken = time
                    if time - since >= settings.recallTime, let change = recall() { return change }
                }
                if time - since >= settings.stepTime {
                    // A step: what was learnt before it no longer holds.
                    steps += 1
                    learning = true
                    afterStep = true
                    points = Array(repeating: nil, count: SphereRegions.count)
                    for p in pending { take(p.raw, up: p.up, time: time) }
                    pending = []
                    disturbedSince = nil
                }
                return nil
            }
            disturbedSince = nil
            pending.removeAll(keepingCapacity: true)
        }
        guard time - lastTaken >= settings.sampleInterval else { return nil }
        lastTaken = time
        take(raw, up: up, time: time)
        return nil
    }

    /// An earlier calibration that explains the disturbance's samples as undisturbed, put back in force.
    private mutating func recall() -> CalibrationChange? {
        let samples = pending.map { Point(raw: $0.raw, up: $0.up, time: 0) }
        guard samples.count >= 10, !earlier.isEmpty else { return nil }
        // Any calibration explains a still vehicle: the samples must have turned through a few directions.
        guard Set(samples.compactMap { SphereRegions.region(of: $0.raw - inForce.offset) }).count >= 4 else { return nil }
        let now = Self.misfit(inForce, samples)
        var best: (Int, CalibrationMisfit)?
        for (i, c) in earlier.enumerated() {
            let m = Self.misfit(c, samples)
            guard m.normPercent < 100 * settings.normDisturbance / 3,
                  m.dipDegrees < settings.dipDisturbance / 2 else { continue }
            if best.map({ m.total < $0.1.total }) ?? true { best = (i, m) }
        }
        guard let (i, m) = best, m.total < settings.acceptRatio * now.total else { return nil }
        let calibration = earlier.remove(at: i)
        let change = CalibrationChange(calibration: calibration, before: now, after: m, regions: 0,
                                       offsetMoved: (calibration.offset - inForce.offset).length, afterStep: false, recalled: true)
        putInForce(calibration, misfit: m)
        self.field = m.meanNorm
        // The points were learnt under the disturbance: they describe the calibration just left.
        points = Array(repeating: nil, count: SphereRegions.count)
        for p in samples { take(p.raw, up: p.up, time: lastTaken) }
        return change
    }

    private mutating func putInForce(_ calibration: MagneticCalibration, misfit: CalibrationMisfit) {
        earlier.removeAll { $0 == inForce }
        earlier.append(inForce)
        if earlier.count > settings.recallDepth { earlier.removeFirst() }
        inForce = calibration
        origin = .auto
        learning = false
        afterStep = false
        self.misfit = misfit
        disturbedSince = nil
        pending = []
    }

    private mutating func take(_ raw: Vector3, up: Vector3?, time: Double) {
        guard let r = SphereRegions.region(of: raw - inForce.offset) else { return }
        // A sample far from its region's point (the iron changed since) replaces it rather than blending in.
        if var p = points[r], (raw - p.raw).length <= settings.normDisturbance * p.raw.length {
            let w = settings.pointWeight
            p.raw = p.raw * (1 - w) + raw * w
            if let up { p.up = ((p.up ?? up) * (1 - w) + up * w).normalized }
            p.time = time
            points[r] = p
        } else {
            points[r] = Point(raw: raw, up: up, time: time)
        }
    }

    /// Whether a fit is due at `time`.
    public func fitDue(at time: Double) -> Bool {
        guard let last = lastFit else { return true }
        return time - last >= settings.fitInterval
    }

    /// What a fit attempt came to.
    public enum Outcome: Equatable, Sendable {
        case accepted(CalibrationChange)
        /// Fitted, but not better enough than the calibration in force (misfits: in force, candidate).
        case kept(inForce: CalibrationMisfit, candidate: CalibrationMisfit)
        case notEnough(regions: Int)
        case failed(String)
    }

    /// Fits the points (aged ones dropped first) and puts the fit in force if it is clearly better.
    public mutating func fit(at time: Double) -> Outcome {
        lastFit = time
        for i in points.indices where points[i].map({ time - $0.time > settings.maximumAge }) == true { points[i] = nil }
        let current = points.compactMap { $0 }
        // After a step only the hard iron is new: the soft iron in force stays, and fewer directions do.
        let hardIronOnly = afterStep && field != nil
        let enough = hardIronOnly ? current.count >= settings.minimumStepRegions
            : current.count >= settings.minimumRegions || current.count >= settings.minimumTurnRegions && Self.headingSectors(current, offset: inForce.offset) >= settings.minimumSectors
        guard enough else { return .notEnough(regions: current.count) }
        var options = MagnetometerCalibrator.Options(field: field)
        if hardIronOnly { options.model = .sphere }
        if let up = current.compactMap(\.up).first { options.down = -up }
        let candidate: CalibrationFit
        do { candidate = try MagnetometerCalibrator(options: options).fit(current.map(\.raw)) } catch { return .failed(error.message) }
        let scale = field ?? candidate.field
        let start = hardIronOnly ? MagneticCalibration(offset: candidate.calibration.offset, matrix: inForce.matrix) : candidate.calibration
        let fitted = Self.refine(start, current, field: scale, softIronPull: hardIronOnly ? 1000 : 5)
        let old = Self.misfit(inForce, current), new = Self.misfit(fitted, current)
        let better = new.total < settings.acceptRatio * old.total && old.total - new.total >= settings.acceptMargin
        guard better else {
            // The calibration in force explains what was learnt (after a step: the disturbance passed).
            misfit = old
            if field == nil { field = old.meanNorm }
            learning = false
            afterStep = false
            return .kept(inForce: old, candidate: new)
        }
        let change = CalibrationChange(calibration: fitted, before: old, after: new, regions: current.count,
                                       offsetMoved: (fitted.offset - inForce.offset).length, afterStep: afterStep)
        // The points stay: their regions were found from the old offset, close enough to keep them apart.
        if field == nil { field = scale }
        putInForce(fitted, misfit: new)
        return .accepted(change)
    }

    /// The calibration that best explains the points' magnitude (`field`) and dip together, from `start`:
    /// Levenberg–Marquardt over the hard iron, the symmetric soft iron and the dip, with a weak pull towards
    /// `start`, so that what the attitude spread leaves undetermined (the vertical, for a vehicle that only
    /// turns) stays where the ellipsoid fit put it while the dip pins the rest.
    static func refine(_ start: MagneticCalibration, _ points: [Point], field: Double, softIronPull: Double = 5) -> MagneticCalibration {
        guard points.contains(where: { $0.up != nil }), field > 0 else { return start }
        let m = start.matrix
        let p0 = [start.offset.x, start.offset.y, start.offset.z, m.rows[0].x, m.rows[1].y, m.rows[2].z, m.rows[0].y, m.rows[0].z, m.rows[1].z,
                  misfit(start, points).meanDip]
        func calibration(_ p: [Double]) -> MagneticCalibration {
            MagneticCalibration(offset: Vector3(p[0], p[1], p[2]),
                                matrix: Matrix3([p[3], p[6], p[7]], [p[6], p[4], p[8]], [p[7], p[8], p[5]]))
        }
        func residuals(_ p: [Double]) -> [Double] {
            let c = calibration(p)
            var r: [Double] = []
            r.reserveCapacity(2 * points.count + 9)
            for point in points {
                let f = c.apply(point.raw)
                r.append(100 * (f.length / field - 1))
                if let up = point.up { r.append(dip(f, up) - p[9]) }
            }
            // The weak pull: 5 µT of hard iron, or 0.2 of soft iron, cost as much as one point 1 % off.
            for k in 0..<3 { r.append(0.2 * (p[k] - p0[k])) }
            for k in 3..<9 { r.append(softIronPull * (p[k] - p0[k])) }
            return r
        }
        func cost(_ r: [Double]) -> Double { r.reduce(0) { $0 + $1 * $1 } }
        var p = p0, r = residuals(p), c = cost(r), mu = 1e-3
        let steps = [Double](repeating: 1e-3 * field, count: 3) + [Double](repeating: 1e-5, count: 6) + [1e-3]
        for _ in 0..<15 {
            // Forward-difference Jacobian, then (JᵀJ + μ diag) δ = −Jᵀr.
            let k = p.count
            var columns: [[Double]] = []
            for j in 0..<k {
                var q = p
                q[j] += steps[j]
                columns.append(zip(residuals(q), r).map { ($0 - $1) / steps[j] })
            }
            var a = DenseMatrix(rows: k, columns: k), g = DenseMatrix(rows: k, columns: 1)
            for i in 0..<k {
                g[i, 0] = -zip(columns[i], r).reduce(0) { $0 + $1.0 * $1.1 }
                for j in i..<k {
                    let v = zip(columns[i], columns[j]).reduce(0) { $0 + $1.0 * $1.1 }
                    a[i, j] = v
                    a[j, i] = v
                }
            }
            var improved = false
            for _ in 0..<6 {
                var damped = a
                for i in 0..<k { damped[i, i] += mu * max(a[i, i], 1e-9) }
                guard let delta = damped.solve(g) else { mu *= 10; continue }
                let q = (0..<k).map { p[$0] + delta[$0, 0] }
                let rq = residuals(q), cq = cost(rq)
                if cq.isFinite && cq < c {
                    improved = c - cq > 1e-9 * c
                    p = q; r = rq; c = cq
                    mu = max(mu / 10, 1e-9)
                    break
                }
                mu *= 10
            }
            if !improved { break }
        }
        return calibration(p)
    }

    /// Of 12 heading sectors, how many hold the horizontal part of a point's field (about the points' mean up).
    static func headingSectors(_ points: [Point], offset: Vector3) -> Int {
        let ups = points.compactMap(\.up)
        guard !ups.isEmpty else { return 0 }
        let up = Vector3.mean(ups).normalized
        let (e1, e2) = up.perpendicularBasis
        var sectors = Set<Int>()
        for p in points {
            let v = p.raw - offset
            let a = atan2(v.dot(e2), v.dot(e1)) * 180 / .pi + 180
            sectors.insert(min(11, Int(a / 30)))
        }
        return sectors.count
    }

    /// How well `calibration` explains `points`.
    static func misfit(_ calibration: MagneticCalibration, _ points: [Point]) -> CalibrationMisfit {
        let fields = points.map { calibration.apply($0.raw) }
        let norms = fields.map(\.length)
        let mean = norms.reduce(0, +) / Double(max(1, norms.count))
        let normRMS = (norms.reduce(0) { $0 + square($1 / mean - 1) } / Double(max(1, norms.count))).squareRoot()
        let dips = zip(fields, points).compactMap { f, p in p.up.map { Self.dip(f, $0) } }
        var dipSpread = 0.0, meanDip = 0.0
        if !dips.isEmpty {
            meanDip = dips.reduce(0, +) / Double(dips.count)
            dipSpread = (dips.reduce(0) { $0 + square($1 - meanDip) } / Double(dips.count)).squareRoot()
        }
        return CalibrationMisfit(normPercent: 100 * normRMS, dipDegrees: dipSpread, meanDip: meanDip, meanNorm: mean)
    }

    /// Dip of `field` below the horizontal, degrees (down positive), with `up` the unit up in its frame.
    static func dip(_ field: Vector3, _ up: Vector3) -> Double {
        let n = field.length
        guard n > 0 else { return 0 }
        return -asin(max(-1, min(1, field.dot(up) / n))) * 180 / .pi
    }

    private static func square(_ x: Double) -> Double { x * x }
}
