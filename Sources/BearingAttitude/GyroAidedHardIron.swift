import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hard iron from the gyroscope's attitude. The gyroscope and accelerometer alone (the filter's 6-D
/// orientation) give each sample's attitude up to a heading that is arbitrary but the same for every sample of a
/// short window: the axes of that frame (east, north, up) in the sensor's axes. The Earth field is fixed in that
/// frame (`b`), so every raw sample is `raw = M·b + o`, with `M` the matrix whose columns are those axes and `o`
/// the hard iron: linear in the six unknowns, solved by least squares over the window, without knowing the
/// field's direction, the heading or the hard iron beforehand, and however large the hard iron is (a magnet beside
/// the chip). The soft iron is left out: what it leaves is in the residual, and the ellipsoid fits that follow
/// refine it. The same frame carries the field over a step of the hard iron: with `b` known from before it, each
/// sample after it gives the new hard iron at once (`offset(after:)`).
///
/// This is the attitude-aided formulation of magnetometer bias estimation (e.g. Troni & Whitcomb, "Adaptive
/// estimation of measurement bias in three-dimensional field sensors with angular rate sensors", 2013; Crassidis,
/// Lai & Harman, "Real-time attitude-independent three-axis magnetometer calibration", JGCD 28(1), 2005, for the
/// attitude-independent one it improves on when an attitude is known), written here as a batch over a window.
public struct GyroAidedHardIron: Sendable {
    public struct Sample: Sendable {
        public var raw: Vector3
        /// The gyroscope frame's east, north and up in the sensor's axes.
        public var east: Vector3
        public var north: Vector3
        public var up: Vector3
        public var time: Double
        /// `M·b`: the field `b` (in the gyroscope's frame) as the sensor sees it.
        public func sensed(_ b: Vector3) -> Vector3 { east * b.x + north * b.y + up * b.z }
        /// `Mᵀ·v`: a sensor-frame vector in the gyroscope's frame.
        public func inFrame(_ v: Vector3) -> Vector3 { Vector3(east.dot(v), north.dot(v), up.dot(v)) }
    }

    public struct Solution: Equatable, Sendable {
        /// The Earth field in the gyroscope's frame, and the hard iron, in the samples' units.
        public var field: Vector3
        public var offset: Vector3
        /// RMS of what the model leaves, as a fraction of the field's magnitude.
        public var residual: Double
        /// The smallest eigenvalue of `I − SᵀS` (S the mean of the M's): 0 when the samples turned about one
        /// axis only (the vertical hard iron and field cannot be told apart), up to 1 for rotations all round.
        public var spread: Double
        /// Solved with the vertical field given (`solveLevel`): `spread` is then that of the horizontal part.
        public var level = false
    }

    /// Seconds of samples kept.
    public var window: Double
    /// The samples kept, oldest first: the last `window` seconds.
    public var samples: [Sample] { Array(kept) }
    private var kept: ArraySlice<Sample> { stored[first...] }
    /// The samples from `first` on are kept; those before it have left the window and are dropped in one move once
    /// they are as many as those kept (each sample is moved about once, where dropping each as it left moved the whole
    /// window every sample: 1,200 instructions a sample in the daemon's path, 2026-12-06).
    private var stored: [Sample] = []
    private var first = 0

    public init(window: Double = 20) {
        self.window = window
    }

    /// One sample: its raw field, and the gyroscope frame's east and up in the sensor's axes (unit).
    public mutating func add(_ raw: Vector3, east: Vector3, up: Vector3, time: Double) {
        if let s = Self.sample(raw, east: east, up: up, time: time) { add(s) }
    }

    /// One sample already in the frame (`sample(_:east:up:time:)`'s).
    public mutating func add(_ s: Sample) {
        let time = s.time
        stored.append(s)
        if time - stored[first].time > window {
            first = stored[first...].firstIndex { time - $0.time <= window } ?? stored.count
            if first >= stored.count - first {
                stored.removeFirst(first)
                first = 0
            }
        }
    }

    public mutating func removeAll() {
        stored.removeAll(keepingCapacity: true)
        first = 0
    }

    /// The least-squares field and hard iron over the window; nil with fewer than `minimumSamples` or a spread
    /// below `minimumSpread`.
    public func solve(minimumSamples: Int = 50, minimumSpread: Double = 0.05) -> Solution? {
        guard kept.count >= minimumSamples else { return nil }
        let n = Double(kept.count)
        // S = mean M (columns east, north, up), and the means of raw and Mᵀ·raw.
        var s0 = Vector3.zero, s1 = Vector3.zero, s2 = Vector3.zero
        var meanRaw = Vector3.zero, meanFrame = Vector3.zero
        for x in kept {
            s0 = s0 + x.east; s1 = s1 + x.north; s2 = s2 + x.up
            meanRaw = meanRaw + x.raw
            meanFrame = meanFrame + x.inFrame(x.raw)
        }
        s0 = s0 * (1 / n); s1 = s1 * (1 / n); s2 = s2 * (1 / n)
        meanRaw = meanRaw * (1 / n)
        meanFrame = meanFrame * (1 / n)
        // (I − SᵀS) b = mean(Mᵀ raw) − Sᵀ mean(raw); o = mean(raw) − S b.
        let columns = [s0, s1, s2]
        var a = DenseMatrix(rows: 3, columns: 3), g = DenseMatrix(rows: 3, columns: 1)
        for i in 0..<3 {
            for j in 0..<3 { a[i, j] = (i == j ? 1 : 0) - columns[i].dot(columns[j]) }
        }
        let sTraw = Vector3(s0.dot(meanRaw), s1.dot(meanRaw), s2.dot(meanRaw))
        let rhs = meanFrame - sTraw
        g[0, 0] = rhs.x; g[1, 0] = rhs.y; g[2, 0] = rhs.z
        let spread = a.symmetricEigen().values.min() ?? 0
        guard spread >= minimumSpread, let x = a.solve(g) else { return nil }
        let b = Vector3(x[0, 0], x[1, 0], x[2, 0])
        let o = meanRaw - (s0 * b.x + s1 * b.y + s2 * b.z)
        let norm = b.length
        guard norm > 0, norm.isFinite, o.isFinite else { return nil }
        return Solution(field: b, offset: o, residual: Self.residual(kept, field: b, offset: o), spread: spread)
    }

    /// The same for a board that turns about its vertical only (a car, a boat that hardly rolls), where the vertical
    /// hard iron cannot be told from the vertical field: that component of the field in the frame is given
    /// (`vertical`, up positive: WMM's −|B|·sin(dip), dip down positive, in the samples' units), and the horizontal
    /// field and the whole hard iron are solved, `raw − up·vertical = east·bₑ + north·bₙ + o`. A turn through an arc
    /// of φ has a spread of 1 − (sin²φ + (1 − cos φ)²)/φ²: 0.19 for a right-angle corner, 0.09 for 60°, 0.02 for 30°.
    /// nil with fewer than `minimumSamples` or a spread below `minimumSpread`.
    public func solveLevel(vertical bu: Double, minimumSamples: Int = 50, minimumSpread: Double = 0.05) -> Solution? {
        guard kept.count >= minimumSamples, bu.isFinite else { return nil }
        let n = Double(kept.count)
        var se = Vector3.zero, sn = Vector3.zero, meanR = Vector3.zero
        var frame = (e: 0.0, n: 0.0)
        for x in kept {
            let r = x.raw - x.up * bu
            se = se + x.east; sn = sn + x.north
            meanR = meanR + r
            frame.e += x.east.dot(r); frame.n += x.north.dot(r)
        }
        se = se * (1 / n); sn = sn * (1 / n); meanR = meanR * (1 / n)
        // (I − SᵀS) c = mean(Eᵀ r) − Sᵀ mean(r), S = (mean east, mean north); o = mean(r) − S c.
        let (a00, a01, a11, spread) = Self.horizontalSpread(meanEast: se, meanNorth: sn)
        let g0 = frame.e / n - se.dot(meanR), g1 = frame.n / n - sn.dot(meanR)
        let det = a00 * a11 - a01 * a01
        guard spread >= minimumSpread, det > 0 else { return nil }
        let be = (a11 * g0 - a01 * g1) / det, bn = (a00 * g1 - a01 * g0) / det
        let b = Vector3(be, bn, bu)
        let o = meanR - se * be - sn * bn
        let norm = b.length
        guard norm > 0, norm.isFinite, o.isFinite else { return nil }
        return Solution(field: b, offset: o, residual: Self.residual(kept, field: b, offset: o), spread: spread, level: true)
    }

    /// How far the samples after `time` turned about the vertical: `solveLevel`'s spread over them alone (0 for a
    /// board that did not turn).
    public func levelSpread(after time: Double) -> Double {
        var se = Vector3.zero, sn = Vector3.zero, n = 0.0
        for x in kept where x.time > time {
            se = se + x.east; sn = sn + x.north
            n += 1
        }
        guard n > 0 else { return 0 }
        return Self.horizontalSpread(meanEast: se * (1 / n), meanNorth: sn * (1 / n)).spread
    }

    /// `I − SᵀS` for the frame's mean east and north (S = (ē, n̄), 2×2 symmetric: a₀₀, a₀₁, a₁₁) and its smaller
    /// eigenvalue, the spread of a turn about the vertical.
    private static func horizontalSpread(meanEast se: Vector3, meanNorth sn: Vector3) -> (Double, Double, Double, spread: Double) {
        let a00 = 1 - se.dot(se), a01 = -se.dot(sn), a11 = 1 - sn.dot(sn)
        return (a00, a01, a11, (a00 + a11) / 2 - (((a00 - a11) / 2) * ((a00 - a11) / 2) + a01 * a01).squareRoot())
    }

    /// How well the field `b` (in the gyroscope's frame) and the hard iron `o` explain the samples taken after
    /// `time`: the RMS of `raw − (M·b + o)` as a fraction of |b|, and how many there were. With `b` nil, the best any
    /// field fixed in the frame does with that hard iron (its least-squares `b`): the score of a hard iron alone.
    public func residual(field b: Vector3?, offset o: Vector3, after time: Double) -> (value: Double, count: Int) {
        let fresh = kept.filter { $0.time > time }
        guard !fresh.isEmpty else { return (.infinity, 0) }
        let field = b ?? fresh.reduce(Vector3.zero) { $0 + $1.inFrame($1.raw - o) } * (1 / Double(fresh.count))
        guard field.length > 0 else { return (.infinity, fresh.count) }
        return (Self.residual(fresh, field: field, offset: o), fresh.count)
    }

    /// The RMS of `raw − (M·b + o)` over `samples` (not empty), as a fraction of |b| (> 0).
    static func residual(_ samples: some Collection<Sample>, field b: Vector3, offset o: Vector3) -> Double {
        let sum = samples.reduce(0.0) { r, x in
            let d = x.raw - x.sensed(b) - o
            return r + d.dot(d)
        }
        return (sum / Double(samples.count)).squareRoot() / b.length
    }

    /// How far a calibration's field wanders in the gyroscope's frame over `samples`: the RMS distance of each
    /// calibrated sample, turned into that frame, from their mean, as a fraction of the mean's magnitude. The Earth
    /// field is fixed there, so a calibration that turns the heading as the board turns (the error a heading
    /// suffers) makes it wander, whatever it does to the magnitude. 0 for a perfect one.
    public static func wander(_ samples: [Sample], _ calibrated: (Vector3) -> Vector3) -> Double {
        guard !samples.isEmpty else { return .infinity }
        let inFrame = samples.map { $0.inFrame(calibrated($0.raw)) }
        let mean = inFrame.reduce(Vector3.zero, +) * (1 / Double(inFrame.count))
        let norm = mean.length
        guard norm > 0 else { return .infinity }
        let sum = inFrame.reduce(0.0) { r, v in r + (v - mean).dot(v - mean) }
        return (sum / Double(inFrame.count)).squareRoot() / norm
    }

    /// Each sample's calibrated field, its horizontal direction in the gyroscope's frame (radians east of that frame's
    /// north), off their circular mean: what a heading from the field would wander by. Empty without a horizontal field.
    public static func headingDeviations(_ samples: [Sample], _ calibrated: (Vector3) -> Vector3) -> [Double] {
        fieldHeading(samples, calibrated)?.deviations ?? []
    }

    /// The samples' calibrated field, its horizontal direction in the gyroscope's frame (radians east of that frame's
    /// north, as a heading from the field is taken): the circular mean, and each sample's direction off it. nil without
    /// samples or a horizontal field.
    public static func fieldHeading(_ samples: [Sample], _ calibrated: (Vector3) -> Vector3) -> (mean: Double, deviations: [Double])? {
        let angles = samples.map { s -> Double in
            let v = s.inFrame(calibrated(s.raw))
            return atan2(v.x, v.y)
        }
        let (sines, cosines) = angles.reduce((0.0, 0.0)) { ($0.0 + sin($1), $0.1 + cos($1)) }
        guard sines != 0 || cosines != 0 else { return nil }
        let mean = atan2(sines, cosines)
        return (mean, angles.map { remainder($0 - mean, 2 * .pi) })
    }

    /// Whether the field's heading wanders less under `candidate` than under `inForce` over the same samples, by `z`
    /// standard deviations of a sign test: of the samples whose deviation (`headingDeviations`) differs, the number
    /// closer to their mean direction under the candidate, k of n, must exceed a fair coin's n/2 by z·√n/2. A sign
    /// test, not the paired mean of the squares: a wandering field's few far samples outweigh the rest there (a car's
    /// corner: a hard iron 2.6 µT nearer that took 38 % off the squares was not "clearly" better by them).
    public static func headingWandersLess(_ samples: [Sample], candidate: (Vector3) -> Vector3, than inForce: (Vector3) -> Vector3,
                                          by z: Double) -> Bool {
        let a = headingDeviations(samples, candidate), b = headingDeviations(samples, inForce)
        guard a.count == b.count else { return false }
        var n = 0.0, k = 0.0
        for (x, y) in zip(a, b) where abs(x) != abs(y) {
            n += 1
            if abs(x) < abs(y) { k += 1 }
        }
        return n > 0 && (2 * k - n) / n.squareRoot() > z
    }

    /// The hard iron after a step, from `samples` taken after it and the field `b` in the gyroscope's frame from
    /// before it, with the soft iron `matrix` in force (calibrated = matrix·(raw − offset)): each sample's
    /// `raw − matrix⁻¹·M·b`, the median per axis (a magnet still moving in is outvoted). nil without samples
    /// or an invertible matrix.
    public static func offset(after samples: [Sample], field b: Vector3, matrix: Matrix3) -> Vector3? {
        guard !samples.isEmpty, let inverse = matrix.inverse else { return nil }
        return median(samples.map { $0.raw - inverse * $0.sensed(b) })
    }

    /// The median of each axis (a few outliers among the vectors are outvoted). `v` must not be empty.
    public static func median(_ v: [Vector3]) -> Vector3 {
        func median(_ x: [Double]) -> Double { x.sorted()[x.count / 2] }
        return Vector3(median(v.map(\.x)), median(v.map(\.y)), median(v.map(\.z)))
    }

    /// A sample from its raw field and the gyroscope frame's east and up (nil when either is missing).
    public static func sample(_ raw: Vector3, east: Vector3?, up: Vector3?, time: Double) -> Sample? {
        guard let east, let up, raw.isFinite, east.isFinite, up.isFinite else { return nil }
        let u = up.normalized, e = (east - u * east.dot(u)).normalized
        return Sample(raw: raw, east: e, north: u.cross(e), up: u, time: time)
    }
}
