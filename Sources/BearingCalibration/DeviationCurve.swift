import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A compass's deviation as a function of its own heading, the classic five-term curve of compass
/// adjusters: dev(ψ) = A + B sin ψ + C cos ψ + D sin 2ψ + E cos 2ψ, degrees, east positive, with ψ the
/// compass (sensor) heading. NMEA's sense: magnetic = compass + deviation; true = magnetic + variation.
/// A is a constant misalignment, B and C the hard iron's horizontal part (semicircular deviation), D and E
/// the soft iron's (quadrantal deviation).
public struct DeviationCurve: Codable, Equatable, Sendable {
    /// A, B, C, D, E in degrees.
    public var coefficients: [Double]
    /// One standard deviation of each coefficient, degrees (nil: not known, e.g. written by hand).
    public var uncertainties: [Double]?

    public static let names = ["A", "B", "C", "D", "E"]
    public static let zero = DeviationCurve(coefficients: [0, 0, 0, 0, 0])

    public init(coefficients: [Double], uncertainties: [Double]? = nil) {
        self.coefficients = coefficients
        self.uncertainties = uncertainties
    }

    /// The curve's terms at compass heading `degrees`: 1, sin ψ, cos ψ, sin 2ψ, cos 2ψ.
    public static func terms(_ degrees: Double) -> [Double] {
        let r = degrees * .pi / 180
        return [1, sin(r), cos(r), sin(2 * r), cos(2 * r)]
    }

    /// The deviation at compass heading `degrees`, degrees east.
    public func deviation(atCompassHeading degrees: Double) -> Double {
        zip(Self.terms(degrees), coefficients).reduce(0) { $0 + $1.0 * $1.1 }
    }

    /// The magnetic heading for compass heading `degrees`, in [0, 360).
    public func magneticHeading(compass degrees: Double) -> Double {
        AttitudeAngles.normalizedDegrees(degrees + deviation(atCompassHeading: degrees))
    }

    /// Why this curve cannot be used (five finite coefficients, each within ±45°), or nil.
    public var problem: String? {
        guard coefficients.count == 5 else { return "a deviation curve has five coefficients (A, B, C, D, E), not \(coefficients.count)" }
        for (name, c) in zip(Self.names, coefficients) where !c.isFinite || abs(c) > 45 {
            return "deviation coefficient \(name) = \(c)°: not a deviation a compass can be corrected for (|\(name)| ≤ 45°)"
        }
        if let u = uncertainties, u.count != 5 || u.contains(where: { !$0.isFinite || $0 < 0 }) {
            return "deviation uncertainties must be five finite values ≥ 0"
        }
        return nil
    }
}

/// Deviation learnt from ordinary driving, for a land vehicle (no current, little sideslip): at speed and
/// going straight the course over ground is the heading, so each such GNSS epoch observes the deviation at
/// the compass heading of the moment (course − variation − compass). The newest observations are kept per
/// 30° sector of compass heading (`perSector` of them); the curve is fitted to each sector's median: all five
/// terms once `minimumSectors` sectors hold `minimumPerSector`, A alone (the mounting's misalignment and the
/// deviation where the vehicle has been) before that. Until the full curve, the deviation applied
/// (`deviation(atCompassHeading:)`) is the sectors' own: what was seen at that heading, interpolated between
/// neighbouring sectors, and A only where nothing was seen; a deviation that changes with the heading (what is
/// left of the iron) is not carried to headings it does not belong to. Start again (`reset`) when the
/// magnetometer's calibration changes: the deviation left over is then another.
public struct PassiveDeviation: Sendable {
    public struct Settings: Equatable, Sendable {
        /// Slowest speed over ground an epoch may have, m/s; fastest turn, °/s; worst `eps`, m/s.
        public var minimumSpeed = 4.0
        public var maximumTurnRate = 2.0
        public var maximumSpeedError = 0.5
        public var perSector = 60
        public var minimumPerSector = 5
        public var minimumSectors = 8
        /// A deviation beyond this is not one (a reversing car, a GNSS glitch), degrees.
        public var maximumDeviation = 45.0
        /// Seconds after the first epoch, and after each change of the magnetometer's calibration, before
        /// epochs are taken: the filter's heading settles (3 × its 9 s time constant).
        public var settling = 30.0
        public init() {}
    }

    public let settings: Settings
    private var sectors: [[(compass: Double, deviation: Double)]] = Array(repeating: [], count: 12)
    /// Each sector's median observation, at its median compass heading (nil: fewer than `minimumPerSector`):
    /// one vote per sector, kept as its sector changes.
    private var medians: [(compass: Double, deviation: Double)?] = Array(repeating: nil, count: 12)
    /// The curve from what has been seen (nil: nothing usable yet).
    public private(set) var curve: DeviationCurve?
    /// The deviation to apply, by compass heading (nil: nothing usable yet): the curve's once it has all five
    /// terms, the sectors' own before (see above).
    public private(set) var table: DeviationTable?
    /// Whether the latest epoch was one of going straight at speed (the guards of `add`, settled or not).
    public private(set) var straight = false
    /// Epochs taken, and set aside.
    public private(set) var taken = 0
    public private(set) var setAside = 0

    /// The last epoch's time and the gyroscope's heading then.
    private var lastEpoch: (time: Double, heading: Double)?
    /// Epochs before this time are not taken (nil: from `settling` after the next epoch).
    private var settledAt: Double?

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// One GNSS epoch at `time` (seconds): the compass heading then (degrees magnetic, before deviation), the
    /// gyroscope's heading then (`gyroHeading`, degrees: the attitude filter's 6D heading, which the magnetometer
    /// never turns, from any start), the course and speed over ground, `eps`, and `variation` degrees east; the
    /// turn rate is the gyroscope's heading's change since the epoch before (read once an epoch, not summed
    /// every sample: at 2 °/s an epoch a second apart is far from ambiguous). Returns whether it was taken.
    @discardableResult
    public mutating func epoch(time: Double, compass: Double, gyroHeading: Double, track: Double, speed: Double, eps: Double?,
                               variation: Double) -> Bool {
        straight = false
        guard time.isFinite, gyroHeading.isFinite else { return false }
        // A fix repeated with the same time (a frozen TPV) is no new epoch; one from before the last (the
        // receiver's clock stepped back) starts again from itself, settling included.
        if let last = lastEpoch {
            if time == last.time { return false }
            if time < last.time { settledAt = nil }
        }
        defer { lastEpoch = (time, gyroHeading) }
        if settledAt == nil { settledAt = time + settings.settling }
        guard let last = lastEpoch, time > last.time else { return false }
        let turnRate = SwingSolver.wrap180(gyroHeading - last.heading) / (time - last.time)
        straight = goingStraight(track: track, speed: speed, turnRate: turnRate, eps: eps)
        guard time >= settledAt ?? time else { return false }
        return add(compass: compass, track: track, speed: speed, turnRate: turnRate, eps: eps, variation: variation)
    }

    /// The guards on an epoch: fast enough, turning slowly enough, its speed known well enough.
    func goingStraight(track: Double, speed: Double, turnRate: Double, eps: Double?) -> Bool {
        [track, speed, turnRate].allSatisfy(\.isFinite) && speed >= settings.minimumSpeed
            && abs(turnRate) <= settings.maximumTurnRate && (eps ?? 0) <= settings.maximumSpeedError
    }

    /// The magnetometer's calibration changed at `time` (nil: unknown, then from the next epoch): the deviation
    /// left over is another, learnt again once the heading settles.
    public mutating func restart(at time: Double?) {
        reset()
        settledAt = time.map { $0 + settings.settling }
    }

    /// Sectors holding enough observations for the full curve.
    public var sectorsCovered: Int { sectors.filter { $0.count >= settings.minimumPerSector }.count }

    /// One GNSS epoch: the compass heading then (degrees magnetic, before deviation), the course and speed over
    /// ground, the turn rate (°/s) and `eps`; `variation` degrees east. Returns whether it was taken.
    @discardableResult
    public mutating func add(compass: Double, track: Double, speed: Double, turnRate: Double, eps: Double?, variation: Double) -> Bool {
        guard compass.isFinite, variation.isFinite, goingStraight(track: track, speed: speed, turnRate: turnRate, eps: eps) else {
            setAside += 1
            return false
        }
        let c = AttitudeAngles.normalizedDegrees(compass)
        let d = SwingSolver.wrap180(track - variation - c)
        guard abs(d) <= settings.maximumDeviation else {
            setAside += 1
            return false
        }
        let s = SwingSolver.sector(c, 12)
        sectors[s].append((c, d))
        if sectors[s].count > settings.perSector { sectors[s].removeFirst() }
        updateMedian(s)
        taken += 1
        refit()
        return true
    }

    /// Each sector's observations (compass heading, deviation), oldest first: what `restore` takes back.
    public var observations: [[(compass: Double, deviation: Double)]] { sectors }

    /// Puts back observations kept from an earlier run (`DrivingDeviationRecord`): the sectors, their medians
    /// and the curve are as they were. Twelve sectors; a sector's newest `perSector` are kept.
    public mutating func restore(_ observations: [[(compass: Double, deviation: Double)]]) {
        guard observations.count == 12 else { return }
        reset()
        for s in 0..<12 {
            sectors[s] = Array(observations[s].suffix(settings.perSector))
            updateMedian(s)
        }
        refit()
    }

    private mutating func updateMedian(_ s: Int) {
        let obs = sectors[s]
        guard obs.count >= settings.minimumPerSector else { return }
        let devs = obs.map(\.deviation).sorted(), compasses = obs.map(\.compass).sorted()
        medians[s] = (compasses[compasses.count / 2], devs[devs.count / 2])
    }

    public mutating func reset() {
        sectors = Array(repeating: [], count: 12)
        medians = Array(repeating: nil, count: 12)
        curve = nil
        table = nil
    }

    /// The deviation to apply at compass heading `degrees` (nil: nothing usable yet).
    public func deviation(atCompassHeading degrees: Double) -> Double? { table?.deviation(atCompassHeading: degrees) }

    private mutating func refit() {
        let medians = self.medians.compactMap { $0 }
        if medians.count >= settings.minimumSectors, let fit = SwingSolver.fitCurve(medians) {
            let full = DeviationCurve(coefficients: fit.coefficients, uncertainties: fit.sigmas)
            curve = full
            table = DeviationTable(full)
        } else if !medians.isEmpty {
            let a = medians.map(\.deviation).reduce(0, +) / Double(medians.count)
            curve = DeviationCurve(coefficients: [a, 0, 0, 0, 0])
            table = DeviationTable(sectors: medians, elsewhere: a)
        } else {
            curve = nil
            table = nil
        }
    }
}

/// A deviation by compass heading, one value a whole degree, linear between: what the fusion stage applies
/// per sample (a lookup, not the curve's sines) from the deviation learnt from driving.
public struct DeviationTable: Equatable, Sendable {
    /// `values[d]`: the deviation at compass heading d°, degrees east.
    public let values: [Double]

    public init(_ values: [Double]) {
        precondition(values.count == 360)
        self.values = values
    }

    /// The curve's deviation at each whole degree (sines by rotating a degree at a time: no trigonometry per entry).
    public init(_ curve: DeviationCurve) {
        let k = curve.coefficients.count == 5 ? curve.coefficients : [0, 0, 0, 0, 0]
        let step = (sin: sin(Double.pi / 180), cos: cos(Double.pi / 180))
        var (s, c) = (0.0, 1.0)
        var values = [Double](repeating: 0, count: 360)
        for d in 0..<360 {
            values[d] = k[0] + k[1] * s + k[2] * c + k[3] * (2 * s * c) + k[4] * (c * c - s * s)
            (s, c) = (s * step.cos + c * step.sin, c * step.cos - s * step.sin)
        }
        self.values = values
    }

    /// From sectors' medians (compass heading, deviation): a median's own within 15° of it, linear between two
    /// medians up to 60° apart, `elsewhere` beyond. One pass over the degrees, between neighbouring medians.
    public init(sectors medians: [(compass: Double, deviation: Double)], elsewhere: Double) {
        var values = [Double](repeating: elsewhere, count: 360)
        let sorted = medians.filter { $0.compass.isFinite && $0.deviation.isFinite }
            .map { (compass: AttitudeAngles.normalizedDegrees($0.compass), deviation: $0.deviation) }.sorted { $0.compass < $1.compass }
        for (i, a) in sorted.enumerated() {
            // From this median clockwise to the next (itself, once round, when it is the only one).
            let b = sorted[(i + 1) % sorted.count]
            let end = b.compass + (i + 1 == sorted.count ? 360 : 0), gap = end - a.compass
            var d = Int(a.compass.rounded(.up))
            while Double(d) < end {
                let below = Double(d) - a.compass, above = end - Double(d)
                let v: Double
                if gap <= 60 {
                    v = gap > 0 ? a.deviation + (b.deviation - a.deviation) * below / gap : a.deviation
                } else {
                    v = below <= 15 ? a.deviation : above <= 15 ? b.deviation : elsewhere
                }
                values[((d % 360) + 360) % 360] = v
                d += 1
            }
        }
        self.values = values
    }

    /// The deviation at compass heading `degrees` (0 for a heading that is not a number).
    @inlinable
    public func deviation(atCompassHeading degrees: Double) -> Double {
        guard degrees.isFinite else { return 0 }
        let h = AttitudeAngles.normalizedDegrees(degrees)
        let i = min(359, Int(h)), f = h - Double(i)
        return values[i] + (values[i == 359 ? 0 : i + 1] - values[i]) * f
    }
}
