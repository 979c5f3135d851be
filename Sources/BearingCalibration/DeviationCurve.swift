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
    /// The curve from what has been seen (nil: nothing usable yet).
    public private(set) var curve: DeviationCurve?
    /// Before the full curve: the deviation to apply at each whole degree of compass heading.
    private var interim: [Double]?
    /// Whether the latest epoch was one of going straight at speed (the guards of `add`, settled or not).
    public private(set) var straight = false
    /// Epochs taken, and set aside.
    public private(set) var taken = 0
    public private(set) var setAside = 0

    /// The gyroscope's turn about the vertical so far (degrees, clockwise), and where it stood at the last epoch.
    private var turn = 0.0
    private var lastEpoch: (time: Double, turn: Double)?
    /// Epochs before this time are not taken (nil: from `settling` after the next epoch).
    private var settledAt: Double?

    public init(settings: Settings = Settings()) { self.settings = settings }

    /// The vehicle turned by `degrees` (clockwise, from the gyroscope) since the last call.
    public mutating func turned(by degrees: Double) {
        if degrees.isFinite { turn += degrees }
    }

    /// One GNSS epoch at `time` (seconds): the compass heading then (degrees magnetic, before deviation), the
    /// course and speed over ground, `eps`, and `variation` degrees east; the turn rate is the gyroscope's
    /// turn since the epoch before. Returns whether it was taken.
    @discardableResult
    public mutating func epoch(time: Double, compass: Double, track: Double, speed: Double, eps: Double?, variation: Double) -> Bool {
        straight = false
        guard time.isFinite else { return false }
        defer { lastEpoch = (time, turn) }
        if settledAt == nil { settledAt = time + settings.settling }
        guard let last = lastEpoch, time > last.time else { return false }
        let turnRate = (turn - last.turn) / (time - last.time)
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
        taken += 1
        refit()
        return true
    }

    public mutating func reset() {
        sectors = Array(repeating: [], count: 12)
        curve = nil
        interim = nil
    }

    /// The deviation to apply at compass heading `degrees` (nil: nothing usable yet): the curve's once it has all
    /// five terms, else the sectors' own (see above).
    public func deviation(atCompassHeading degrees: Double) -> Double? {
        if let interim, degrees.isFinite {
            return interim[min(359, max(0, Int(AttitudeAngles.normalizedDegrees(degrees))))]
        }
        return curve?.deviation(atCompassHeading: degrees)
    }

    private mutating func refit() {
        // Each sector's median observation, at the median compass heading: one vote per sector.
        let medians: [(compass: Double, deviation: Double)] = sectors.compactMap { obs in
            guard obs.count >= settings.minimumPerSector else { return nil }
            let d = obs.map(\.deviation).sorted(), c = obs.map(\.compass).sorted()
            return (c[c.count / 2], d[d.count / 2])
        }
        interim = nil
        if medians.count >= settings.minimumSectors, let fit = SwingSolver.fitCurve(medians) {
            curve = DeviationCurve(coefficients: fit.coefficients, uncertainties: fit.sigmas)
        } else if !medians.isEmpty {
            let a = medians.map(\.deviation).reduce(0, +) / Double(medians.count)
            curve = DeviationCurve(coefficients: [a, 0, 0, 0, 0])
            interim = Self.interpolated(medians, elsewhere: a)
        }
    }

    /// Each whole degree's deviation from the sectors' medians: a median's own within 15° of it, linear between
    /// two medians up to 60° apart, `elsewhere` beyond.
    static func interpolated(_ medians: [(compass: Double, deviation: Double)], elsewhere: Double) -> [Double] {
        let sorted = medians.sorted { $0.compass < $1.compass }
        return (0..<360).map { degree in
            let c = Double(degree) + 0.5
            // The nearest median clockwise and anticlockwise of c, with their distances.
            var below: (distance: Double, deviation: Double)?, above: (distance: Double, deviation: Double)?
            for m in sorted {
                let ahead = AttitudeAngles.normalizedDegrees(m.compass - c), behind = 360 - ahead
                if above.map({ ahead < $0.distance }) ?? true { above = (ahead, m.deviation) }
                if below.map({ behind < $0.distance }) ?? true { below = (behind, m.deviation) }
            }
            guard let below, let above else { return elsewhere }
            if below.distance + above.distance <= 60 {
                return below.deviation + (above.deviation - below.deviation) * below.distance / (below.distance + above.distance)
            }
            let nearest = below.distance <= above.distance ? below : above
            return nearest.distance <= 15 ? nearest.deviation : elsewhere
        }
    }
}
