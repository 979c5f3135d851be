import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// One GNSS epoch of a swing: the heading the gyroscope has turned through and the compass's heading at
/// that moment, with gpsd's ground velocity.
public struct SwingSample: Equatable, Sendable {
    /// Seconds, any origin (gpsd's time or the samples' clock).
    public var time: Double
    /// The integrated turn about the vertical, degrees clockwise from an arbitrary origin, not wrapped.
    public var gyroHeading: Double
    /// The compass (sensor) heading, degrees from magnetic north, before any deviation correction.
    public var compassHeading: Double
    /// Speed over ground, m/s, and course over ground, degrees true.
    public var speed: Double
    public var track: Double
    /// gpsd's `eph` (m) and `eps` (m/s) when it gave them.
    public var eph: Double?
    public var eps: Double?

    public init(time: Double, gyroHeading: Double, compassHeading: Double, speed: Double, track: Double, eph: Double? = nil, eps: Double? = nil) {
        self.time = time
        self.gyroHeading = gyroHeading
        self.compassHeading = compassHeading
        self.speed = speed
        self.track = track
        self.eph = eph
        self.eps = eps
    }
}

/// What a swing's epochs must meet to be used, and what the whole swing must meet to be believed.
public struct SwingLimits: Equatable, Sendable {
    /// Slowest usable speed over ground, m/s: below it the course is noise.
    public var minimumSpeed = 1.5
    /// Fastest usable turn, °/s: faster, the vehicle skids and the GNSS velocity lags the turn.
    public var maximumTurnRate = 12.0
    /// Worst usable gpsd `eph` (m) and `eps` (m/s).
    public var maximumHorizontalError = 15.0
    public var maximumSpeedError = 0.5
    /// Heading sectors (of `sectors`, by compass heading) that must hold `epochsPerSector` used epochs.
    public var sectors = 12
    public var minimumSectors = 8
    public var epochsPerSector = 3
    /// Largest believable RMS misfits: of the ground velocity (m/s) and of the deviation curve (degrees).
    public var maximumVelocityResidual = 0.4
    public var maximumDeviationResidual = 2.0

    public init() {}
}

/// A swing's failure: which guard, with numbers.
public struct SwingError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// What a swing found.
public struct SwingResult: Equatable, Sendable {
    /// True heading = gyro heading + `headingOffset` − `gyroDrift` · (t − the swing's mean time), degrees.
    public var headingOffset: Double
    public var headingOffsetSigma: Double
    /// °/s: how fast the gyroscope's heading ran ahead (its leftover bias about the vertical) over the swing.
    public var gyroDrift: Double
    /// Speed through the water (or over the road), m/s.
    public var speed: Double
    public var speedSigma: Double
    /// The current (set: where it flows to), m/s east and north; zero when not solved.
    public var current: (east: Double, north: Double)
    public var currentSigma: (east: Double, north: Double)
    public var currentSolved: Bool
    /// The curve, with each coefficient's standard deviation.
    public var curve: DeviationCurve
    /// RMS misfits of the ground velocity (m/s) and of the curve (degrees).
    public var velocityResidual: Double
    public var deviationResidual: Double
    /// Epochs given, used, and set aside by reason.
    public var epochs: Int
    public var used: Int
    public var rejected: [String: Int]
    public var sectorsCovered: Int
    /// Each used epoch's compass heading and the deviation observed there (true − variation − compass).
    public var observations: [(compass: Double, deviation: Double)]

    public var currentSpeed: Double { (current.east * current.east + current.north * current.north).squareRoot() }
    /// Degrees true the current sets towards.
    public var currentSet: Double { AttitudeAngles.normalizedDegrees(atan2(current.east, current.north) * 180 / .pi) }

    public static func == (a: SwingResult, b: SwingResult) -> Bool {
        a.headingOffset == b.headingOffset && a.gyroDrift == b.gyroDrift && a.speed == b.speed && a.current == b.current
            && a.curve == b.curve && a.used == b.used && a.rejected == b.rejected
    }
}

/// Deviation from a turn, against GNSS: over a slow turn at steady speed the ground velocity is
/// speed × (sin ψ, cos ψ) + current, with ψ the true heading = the gyroscope's turn + an offset. Fitting
/// offset, gyro drift, speed and current together (Gauss–Newton) gives the true heading at every epoch
/// without trusting the compass; the deviation curve is then a linear fit of true − variation − compass
/// against the compass heading. Ignoring the current (`solveCurrent: false`, a land vehicle) forces the
/// velocity circle onto the origin: a current then shows up as a false semicircular deviation.
public enum SwingSolver {
    public static func solve(_ samples: [SwingSample], variation: Double, limits: SwingLimits = SwingLimits(),
                             solveCurrent: Bool = true) throws(SwingError) -> SwingResult {
        var rejected: [String: Int] = [:]
        var kept: [SwingSample] = []
        for (i, s) in samples.enumerated() {
            let reason: String?
            if ![s.time, s.gyroHeading, s.compassHeading, s.speed, s.track].allSatisfy(\.isFinite) {
                reason = "not a number"
            } else if let last = kept.last, s.time <= last.time {
                reason = "time not after the previous epoch (a frozen or repeated TPV)"
            } else if s.speed < limits.minimumSpeed {
                reason = "slower than \(limits.minimumSpeed) m/s"
            } else if let eph = s.eph, !(eph <= limits.maximumHorizontalError) {
                reason = "eph over \(limits.maximumHorizontalError) m"
            } else if let eps = s.eps, !(eps <= limits.maximumSpeedError) {
                reason = "eps over \(limits.maximumSpeedError) m/s"
            } else if abs(turnRate(samples, i)) > limits.maximumTurnRate {
                reason = "turning faster than \(limits.maximumTurnRate) °/s"
            } else {
                reason = nil
            }
            if let reason { rejected[reason, default: 0] += 1 } else { kept.append(s) }
        }
        guard kept.count >= 12 else {
            throw SwingError("only \(kept.count) of \(samples.count) GNSS epochs are usable\(describe(rejected)): a swing needs a steady turn at speed")
        }
        var fit = try fitVelocity(kept, solveCurrent: solveCurrent)
        // One pass of outlier rejection (a GNSS velocity glitch, a position jump's spike): beyond 4 robust σ.
        let velocityLimit = max(4 * robustSigma(fit.residuals), 0.05)
        let clean = zip(kept, fit.residuals).filter { $0.1 <= velocityLimit }.map(\.0)
        if clean.count < kept.count {
            rejected["ground velocity off the fit by over \(format(velocityLimit)) m/s", default: 0] += kept.count - clean.count
            kept = clean
            fit = try fitVelocity(kept, solveCurrent: solveCurrent)
        }

        // Coverage, by compass heading.
        let counts = sectorCounts(kept, sectors: limits.sectors)
        let covered = counts.filter { $0 >= limits.epochsPerSector }.count
        guard covered >= limits.minimumSectors else {
            let missing = counts.indices.filter { counts[$0] < limits.epochsPerSector }.map { "\($0 * 360 / limits.sectors)°" }
            throw SwingError("\(covered) of \(limits.sectors) heading sectors covered (\(limits.minimumSectors) needed); turn on through the sectors from \(missing.joined(separator: ", "))")
        }
        let velocityRMS = rms(fit.residuals)
        guard velocityRMS <= limits.maximumVelocityResidual else {
            throw SwingError("the ground velocity does not follow a steady turn (RMS misfit \(format(velocityRMS)) m/s > \(limits.maximumVelocityResidual)): keep speed and the turn steady")
        }

        // The curve from the deviation seen at each epoch.
        let meanTime = kept.map(\.time).reduce(0, +) / Double(kept.count)
        let observations = kept.map { s -> (compass: Double, deviation: Double) in
            let trueHeading = s.gyroHeading + fit.offset + fit.drift * (s.time - meanTime)
            return (AttitudeAngles.normalizedDegrees(s.compassHeading), wrap180(trueHeading - variation - s.compassHeading))
        }
        guard let curveFit = fitCurve(observations) else { throw SwingError("the deviation curve could not be solved (headings too few or too alike)") }
        guard curveFit.rms <= limits.maximumDeviationResidual else {
            throw SwingError("the compass does not follow a deviation curve (RMS misfit \(format(curveFit.rms))° > \(limits.maximumDeviationResidual)°): interference during the swing?")
        }
        var sigmas = curveFit.sigmas
        sigmas[0] = (sigmas[0] * sigmas[0] + fit.sigmas[0] * fit.sigmas[0]).squareRoot()
        let curve = DeviationCurve(coefficients: curveFit.coefficients, uncertainties: sigmas)
        if let problem = curve.problem { throw SwingError(problem) }
        return SwingResult(headingOffset: fit.offset, headingOffsetSigma: fit.sigmas[0], gyroDrift: -fit.drift,
                           speed: fit.speed, speedSigma: fit.sigmas[2],
                           current: (fit.current.0, fit.current.1),
                           currentSigma: solveCurrent ? (fit.sigmas[3], fit.sigmas[4]) : (0, 0), currentSolved: solveCurrent,
                           curve: curve, velocityResidual: velocityRMS, deviationResidual: curveFit.rms,
                           epochs: samples.count, used: kept.count, rejected: rejected, sectorsCovered: covered,
                           observations: observations)
    }

    /// The gyro's turn rate at epoch `i`, °/s, from its neighbours.
    static func turnRate(_ s: [SwingSample], _ i: Int) -> Double {
        let a = s[max(0, i - 1)], b = s[min(s.count - 1, i + 1)]
        let dt = b.time - a.time
        return dt > 0 ? (b.gyroHeading - a.gyroHeading) / dt : 0
    }

    /// The sector (of `sectors` equal ones from north) that `heading` (degrees) falls in.
    public static func sector(_ heading: Double, _ sectors: Int) -> Int {
        min(sectors - 1, Int(AttitudeAngles.normalizedDegrees(heading) / (360 / Double(sectors))))
    }

    /// How many of `samples` fall in each of `sectors` heading sectors, by compass heading.
    static func sectorCounts(_ samples: some Sequence<SwingSample>, sectors: Int) -> [Int] {
        var counts = [Int](repeating: 0, count: sectors)
        for s in samples { counts[sector(s.compassHeading, sectors)] += 1 }
        return counts
    }

    /// The velocity model's fit: offset (degrees), drift (°/s), speed, current, their σ, and each epoch's
    /// velocity misfit (m/s).
    struct VelocityFit {
        var offset: Double
        var drift: Double
        var speed: Double
        var current: (Double, Double)
        var sigmas: [Double]
        var residuals: [Double]
    }

    static func fitVelocity(_ s: [SwingSample], solveCurrent: Bool) throws(SwingError) -> VelocityFit {
        let n = s.count
        let k = solveCurrent ? 5 : 3
        let meanTime = s.map(\.time).reduce(0, +) / Double(n)
        let observed = s.map { (e: $0.speed * sin($0.track * .pi / 180), n: $0.speed * cos($0.track * .pi / 180)) }
        // Start: the mean of course − gyro (no current), the mean speed.
        var sx = 0.0, cx = 0.0
        for x in s { sx += sin((x.track - x.gyroHeading) * .pi / 180); cx += cos((x.track - x.gyroHeading) * .pi / 180) }
        var p = [atan2(sx, cx), 0, s.map(\.speed).reduce(0, +) / Double(n), 0, 0]
        func heading(_ i: Int, _ p: [Double]) -> Double { s[i].gyroHeading * .pi / 180 + p[0] + p[1] * (s[i].time - meanTime) }
        var normal = DenseMatrix(rows: k, columns: k)
        var rss = 0.0
        for iteration in 0..<30 {
            var jtj = DenseMatrix(rows: k, columns: k)
            var jtr = DenseMatrix(rows: k, columns: 1)
            rss = 0
            for i in 0..<n {
                let psi = heading(i, p), sp = sin(psi), cp = cos(psi)
                let dt = s[i].time - meanTime
                let re = observed[i].e - (p[2] * sp + p[3]), rn = observed[i].n - (p[2] * cp + p[4])
                rss += re * re + rn * rn
                let je = [p[2] * cp, p[2] * cp * dt, sp, 1, 0], jn = [-p[2] * sp, -p[2] * sp * dt, cp, 0, 1]
                for a in 0..<k {
                    jtr[a, 0] += je[a] * re + jn[a] * rn
                    for b in 0..<k { jtj[a, b] += je[a] * je[b] + jn[a] * jn[b] }
                }
            }
            normal = jtj
            guard let step = jtj.solve(jtr) else { throw SwingError("the turn does not determine heading, speed and current (is the vehicle turning?)") }
            for a in 0..<k { p[a] += step[a, 0] }
            if (0..<k).allSatisfy({ abs(step[$0, 0]) < 1e-10 }) || iteration == 29 { break }
        }
        var residuals: [Double] = []
        rss = 0
        for i in 0..<n {
            let psi = heading(i, p)
            let re = observed[i].e - (p[2] * sin(psi) + p[3]), rn = observed[i].n - (p[2] * cos(psi) + p[4])
            residuals.append((re * re + rn * rn).squareRoot())
            rss += re * re + rn * rn
        }
        let variance = rss / Double(max(1, 2 * n - k))
        guard let inverse = normal.solve(DenseMatrix.identity(k)) else { throw SwingError("the swing's fit is singular") }
        var sigmas = (0..<k).map { (max(0, inverse[$0, $0]) * variance).squareRoot() }
        sigmas[0] *= 180 / .pi
        sigmas[1] *= 180 / .pi
        while sigmas.count < 5 { sigmas.append(0) }
        return VelocityFit(offset: p[0] * 180 / .pi, drift: p[1] * 180 / .pi, speed: p[2], current: (p[3], p[4]), sigmas: sigmas, residuals: residuals)
    }

    /// Linear least squares of the five-term curve; coefficients, their σ and the RMS misfit, degrees.
    static func fitCurve(_ o: [(compass: Double, deviation: Double)]) -> (coefficients: [Double], sigmas: [Double], rms: Double)? {
        guard o.count > 5 else { return nil }
        var xtx = DenseMatrix(rows: 5, columns: 5), xty = DenseMatrix(rows: 5, columns: 1)
        for (c, d) in o {
            let t = DeviationCurve.terms(c)
            for a in 0..<5 {
                xty[a, 0] += t[a] * d
                for b in 0..<5 { xtx[a, b] += t[a] * t[b] }
            }
        }
        guard let beta = xtx.solve(xty), let inverse = xtx.solve(DenseMatrix.identity(5)) else { return nil }
        let coefficients = (0..<5).map { beta[$0, 0] }
        let curve = DeviationCurve(coefficients: coefficients)
        let misfits = o.map { $0.deviation - curve.deviation(atCompassHeading: $0.compass) }
        let variance = misfits.reduce(0) { $0 + $1 * $1 } / Double(o.count - 5)
        return (coefficients, (0..<5).map { (max(0, inverse[$0, $0]) * variance).squareRoot() }, rms(misfits))
    }

    public static func wrap180(_ d: Double) -> Double {
        var x = d.truncatingRemainder(dividingBy: 360)
        if x > 180 { x -= 360 } else if x <= -180 { x += 360 }
        return x
    }

    static func rms(_ x: [Double]) -> Double { x.isEmpty ? 0 : (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot() }

    /// 1.4826 × the median absolute value (the residuals are magnitudes, already about zero).
    static func robustSigma(_ x: [Double]) -> Double {
        guard !x.isEmpty else { return 0 }
        let sorted = x.map(abs).sorted()
        return 1.4826 * sorted[sorted.count / 2]
    }

    static func describe(_ rejected: [String: Int]) -> String {
        rejected.isEmpty ? "" : " (" + rejected.keys.sorted().map { "\(rejected[$0]!) \($0)" }.joined(separator: "; ") + ")"
    }

    static func format(_ x: Double) -> String { String(printf: "%.2f", x) }
}
