import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// Where a GNSS track's clock lies against an IMU recording's, found from the motion both saw: the vehicle's rate of
/// turn about the vertical from the gyroscope, and the rate of change of the track's course over ground. A GNSS logger
/// stamps its epochs in UTC, GPS time (18 s ahead of UTC since 2017) or local time, an IMU log often from its own
/// boot; `bearing attitude --gnss` wants the track on the samples' clock, and a track on another clock silently gives
/// the fusion no fix at all, or courses from another moment. Turns are what both record: the shift at which the two
/// rates of turn agree best is the clock's offset (plus the receiver's lag behind its own time stamps). This is the
/// temporal calibration of visual–inertial and GNSS–inertial rigs by cross-correlating angular rates (J. Kelly,
/// G. S. Sukhatme, "A General Framework for Temporal Calibration of Multiple Proprioceptive and Exteroceptive
/// Sensors", ISER 2010; Kalibr's IMU–camera time offset is seeded the same way, from the correlation of the rates'
/// norms), with the course's rate in place of a camera's. Pure.
///
/// - The gyroscope's heading ψ(t) is the integral of its rate about "up" (the mean specific force of the whole
///   recording: a car's hills and corners average out), turned clockwise like a course. The rate between two epochs
///   is the difference of their courses over their interval, compared with ψ's over the same interval, shifted.
/// - Only intervals at speed (`leastSpeed` throughout: below it a course is noise), `rateSpan` long, without a gap,
///   count; a shift is judged by the Pearson correlation of the two rates over the intervals it puts inside the
///   recording (a constant gyroscope bias and a scale error change neither), once there are `leastIntervals` of them
///   and both turn (`leastTurning`), and scored by Fisher's z times √(n − 3) (a shift that leaves a stretch of sixty
///   intervals matching one corner is not a drive's match).
/// - Every whole-second shift that leaves that much overlap is tried (a drive's corners are seconds long), the best
///   refined to `refineStep` around it. A match is taken only when it is clear: a correlation of `leastCorrelation`
///   or more, over `leastCoverage` of what the two recordings can share (`mostInside`), and no shift further than
///   `separation` from it scoring `uniqueness` of its score (a drive's corners repeat, but not in the same sequence).
///   The search costs (shifts × intervals): a second of track against a second of samples each, about 10⁸ for two
///   hour-long recordings on clocks far apart.
public struct TrackClock: Sendable {
    /// The agreement of the two rates of turn at one shift.
    public struct Match: Sendable, Equatable {
        /// Seconds added to the track's times to put them on the samples' clock.
        public var offset: Double
        /// Pearson correlation of the track's rate of turn with the gyroscope's.
        public var correlation: Double
        /// The intervals compared.
        public var intervals: Int
        /// How far the correlation stands out from none for that many intervals: Fisher's z times √(n − 3).
        public var score: Double { atanh(max(-0.999999, min(0.999999, correlation))) * Double(max(intervals - 3, 0)).squareRoot() }
    }

    /// The best match over every shift (nil: no shift had enough turning at speed in common).
    public var best: Match?
    /// The best score further than `separation` from `best` (0 without one).
    public var runnerUp: Double
    /// The strongest match, either way, within `ownTimesWindow` of no shift (nil: too little in common there).
    public var atOwnTimes: Match?
    /// Whether the samples have a gyroscope at all.
    public var hasGyroscope: Bool
    /// The correlation the track's rates of turn could reach with the gyroscope's were it this recording's: 1 but for the
    /// noise that positions jittering from one epoch to the next (`positionNoise`) put into courses derived from them.
    /// Each course is the chord of the epochs either side (`GNSSTrackFile.chordReach`), of length L at the epoch's speed,
    /// its direction off by √2·σ/L radians; a rate's noise is its two courses' over its interval; and a correlation is
    /// then at best √(1 − noise/variance) of the track's rates (the attenuation of a correlation by measurement noise,
    /// C. Spearman, "The proof and measurement of association between two things", Am. J. Psychol. 15, 1904).
    public var attainable = 1.0
    /// The positions' jitter, m an axis (`GNSSTrackFile.positionNoise`), when the courses came from them.
    public var positionNoise: Double?

    public static let leastSpeed = 2.5
    /// Seconds each rate spans (three epochs at 1 Hz): a course's change over three seconds has a third of one
    /// second's noise, and a corner lasts longer. One rate is taken a second, at any receiver's rate.
    public static let rateSpan = 3.0
    public static let leastIntervals = 60
    /// The least standard deviation of either rate of turn over the intervals compared, °/s.
    public static let leastTurning = 1.0
    /// A course changing faster than this between two epochs (°/s) is a glitch, not a turn.
    public static let fastestTurn = 40.0
    public static let leastCorrelation = 0.75
    public static let uniqueness = 0.6
    public static let separation = 10.0
    /// The share of `mostInside` a match must compare: a track and samples of one drive share most of it, where
    /// another drive's track (the same roundabout, the same street) matches over a stretch.
    public static let leastCoverage = 0.8
    public static let refineStep = 0.05
    /// Shifts within this of none (s) are the track's own times: the receiver's lag behind its stamps is up to a
    /// second or so, and the fusion expects it.
    public static let ownTimesWindow = 2.0

    /// The most intervals any shift can put inside the samples (the track's, or as many as fit the samples' length).
    public var mostInside = 0

    /// Whether `best` is a clear match: strong enough, over most of what the two recordings can share, and no other
    /// shift near it.
    public var isClear: Bool {
        guard let best else { return false }
        return best.correlation >= Self.leastCorrelation && Double(best.intervals) >= Self.leastCoverage * Double(mostInside)
            && runnerUp < Self.uniqueness * best.score
    }

    /// Searches every shift between the two recordings' spans. `positionNoise`: the epochs' courses came from their
    /// positions (a track of `t,lat,lon`), which jitter by this much (`GNSSTrackFile.positionNoise`), so that it sets
    /// how well the rates can match.
    public init(samples: [IMUSample], hasGyroscope: Bool, epochs: [GNSSTrackFile.Epoch], positionNoise: Double? = nil) {
        self.hasGyroscope = hasGyroscope
        let rates = Self.courseRates(epochs)
        best = nil
        runnerUp = 0
        atOwnTimes = nil
        if let noise = positionNoise {
            self.positionNoise = noise
            attainable = Self.attainable(rates, noise: noise, interval: GNSSTrackFile.typicalInterval(epochs))
        }
        guard hasGyroscope, let heading = GyroHeading(samples), let first = rates.first, let last = rates.last else { return }
        func match(_ offset: Double) -> Match? { Self.match(rates, heading, offset: offset) }
        // The most interval middles any window of the samples' length holds.
        var j = 0
        for i in rates.indices {
            while rates[i].middle - rates[j].middle > heading.end - heading.start { j += 1 }
            mostInside = max(mostInside, i - j + 1)
        }
        // Every whole second that leaves the intervals' middles inside the samples.
        let low = (heading.start - last.middle).rounded(.down), high = (heading.end - first.middle).rounded(.up)
        var coarse: [Match] = []
        var k = 0.0
        while low + k <= high {
            if let m = match(low + k) { coarse.append(m) }
            k += 1
        }
        guard let peak = coarse.max(by: { $0.score < $1.score }) else { return }
        var refined = peak
        var step = -1.0
        while step <= 1.0 + 1e-9 {
            if let m = match(peak.offset + step), m.score > refined.score { refined = m }
            step += Self.refineStep
        }
        best = refined
        runnerUp = coarse.filter { abs($0.offset - refined.offset) > Self.separation }.map(\.score).max() ?? 0
        var own: Match?
        for offset in stride(from: -Self.ownTimesWindow, through: Self.ownTimesWindow, by: Self.refineStep * 10) {
            if let m = match(offset), abs(m.correlation) > abs(own?.correlation ?? 0) { own = m }
        }
        atOwnTimes = own
    }

    /// What `bearing attitude` does with the track's times.
    public enum Decision: Sendable, Equatable {
        /// Take them as they are; `note` says what the check found (nil: nothing worth saying).
        case asGiven(note: String?)
        /// Add `offset` seconds to every epoch's time.
        case shift(offset: Double, note: String)
        /// Refuse the track: its turns are not the samples'.
        case refuse(String)
    }

    /// The decision for a track (`source` names it) whose times span `track` against samples spanning `samples`:
    /// a clear match further than `ownTimesWindow` from none is taken there; no clear match, where the track has
    /// no epoch among the samples or its turns there plainly disagree with the gyroscope's, is refused; else the
    /// track's own times stand.
    public func decision(source: String, track: ClosedRange<Double>, samples: ClosedRange<Double>) -> Decision {
        func f(_ x: Double, _ digits: Int = 2) -> String { String(printf: "%.\(digits)f", x) }
        let hint = "give --gnss-offset SECONDS (added to the track's times) if they are on another clock"
        let overlaps = track.upperBound >= samples.lowerBound && track.lowerBound <= samples.upperBound
        let spans = "the track's times (\(f(track.lowerBound, 1))…\(f(track.upperBound, 1)) s) do not overlap the samples' "
            + "(\(f(samples.lowerBound, 1))…\(f(samples.upperBound, 1)) s)"
        guard hasGyroscope else {
            if !overlaps { return .refuse("\(source): \(spans), and without a gyroscope no shift can be found from the turns; \(hint)") }
            return .asGiven(note: "--gnss: the track's clock is not checked against the samples': they have no gyroscope")
        }
        if isClear, let best {
            let said = "its turns match the gyroscope's there (r \(f(best.correlation)) over \(best.intervals) intervals)"
            if abs(best.offset) <= Self.ownTimesWindow {
                return .asGiven(note: "--gnss: the track is on the samples' clock: \(said), its fixes \(f(-best.offset + 0)) s behind their times")
            }
            return .shift(offset: best.offset, note: "--gnss: \(source): the track's times shifted by \(f(best.offset, 3)) s to the samples' clock: "
                          + "\(said), and \(atOwnTimes.map { "r \(f($0.correlation)) at its own times" } ?? "not at its own times"); --gnss-offset 0 takes them as they are")
        }
        let bestSaid = best.map { "the best r \(f($0.correlation)) at \(f($0.offset, 1)) s, none clear" } ?? "too few turns at speed in common at any shift"
        if !overlaps {
            return .refuse("\(source): \(spans), and its turns match the gyroscope's at no shift (\(bestSaid)); \(hint)")
        }
        if let own = atOwnTimes, own.correlation <= -Self.disagreement {
            return .asGiven(note: "--gnss: the track's turns match the gyroscope's turned the other way (r \(f(own.correlation)) over \(own.intervals) "
                            + "intervals at its own times): is a sign flipped between the gyroscope and the accelerometer (the samples' axes)? "
                            + "Its times taken as the samples'")
        }
        if let own = atOwnTimes, abs(own.correlation) < Self.disagreement, attainable < Self.judgeable, let noise = positionNoise {
            return .asGiven(note: "--gnss: the track's positions jitter by \(f(noise, 1)) m from one epoch to the next: the courses from them are "
                            + "too noisy (its turns could match the gyroscope's at r \(f(attainable)) at best) to tell whether it is this recording's "
                            + "track (r \(f(own.correlation)) at its own times; \(bestSaid)); its times taken as the samples'")
        }
        if let own = atOwnTimes, abs(own.correlation) < Self.disagreement {
            return .refuse("\(source): the track's turns do not match the samples' (r \(f(own.correlation)) over \(own.intervals) intervals at its "
                           + "own times; \(bestSaid)): is it this recording's track? \(hint), or --gnss-offset 0 to take it as it is")
        }
        return .asGiven(note: "--gnss: the track's clock could not be checked against the samples' turns (\(bestSaid)); its times taken as the samples'")
    }

    /// At its own times, a correlation nearer none than this (with enough turning in common) is a track that is not the
    /// samples'; one as far the other way is the samples' own turns with a sign flipped, told and not refused.
    public static let disagreement = 0.4

    /// The least `attainable` correlation at which a track nearer none than `disagreement` is refused: twice it, so that
    /// the track, were it this recording's, would correlate twice as well. Below, the positions jitter too much for its
    /// turns to tell (`TrackClockTests.testAJitteringTrackOnTheSamplesClockIsNotRefused`: 10 m of white noise an axis on
    /// the simulated drives' tracks left r 0.25–0.45 at their own times, and six of eight were refused before this rule).
    public static let judgeable = 0.8

    /// `attainable` for `rates` from a track whose positions jitter by `noise` (m an axis) at `interval` (s).
    static func attainable(_ rates: [CourseRate], noise: Double, interval: Double?) -> Double {
        guard rates.count >= leastIntervals, let interval else { return 1 }
        // Each course is the chord of `reach` epochs either side.
        let chord = 2 * Double(GNSSTrackFile.chordReach(noise, interval: interval)) * interval
        var noiseVariance = 0.0, sum = 0.0, sumSquares = 0.0
        for r in rates {
            // The two courses' directions off by √2·σ/L each (radians), at the interval's ends' speeds.
            let ends = [r.speedBefore, r.speedAfter].map { v -> Double in
                let off = 2.0.squareRoot() * noise / max(v * chord, 1e-3) * 180 / .pi
                return off * off
            }
            noiseVariance += (ends[0] + ends[1]) / (r.length * r.length)
            sum += r.rate
            sumSquares += r.rate * r.rate
        }
        let n = Double(rates.count)
        let variance = sumSquares / n - (sum / n) * (sum / n)
        guard variance > 0 else { return 1 }
        return max(0, 1 - noiseVariance / n / variance).squareRoot()
    }

    /// One interval between two epochs at speed: its middle (track's clock), length, and the course's rate (°/s, clockwise).
    struct CourseRate {
        var middle: Double
        var length: Double
        var rate: Double
        /// The speeds at the interval's two epochs, m/s.
        var speedBefore = 0.0
        var speedAfter = 0.0
    }

    static func courseRates(_ epochs: [GNSSTrackFile.Epoch]) -> [CourseRate] {
        guard let typical = GNSSTrackFile.typicalInterval(epochs) else { return [] }
        let longest = GNSSTrackFile.gapIntervals * typical
        // `rateSpan` seconds of epochs a rate, one rate a second, whatever the receiver's rate.
        let span = max(1, Int((rateSpan / typical).rounded())), stride = max(1, Int((1 / typical).rounded()))
        guard epochs.count > span else { return [] }
        var rates: [CourseRate] = []
        for i in Swift.stride(from: 0, to: epochs.count - span, by: stride) {
            let a = epochs[i], b = epochs[i + span]
            guard (i..<(i + span)).allSatisfy({ epochs[$0 + 1].time - epochs[$0].time <= longest }) else { continue }
            guard (i...(i + span)).allSatisfy({ (epochs[$0].speed ?? 0) >= leastSpeed }), let ca = a.track, let cb = b.track else { continue }
            let dt = b.time - a.time
            guard dt > 0 else { continue }
            let rate = SwingSolver.wrap180(cb - ca) / dt
            guard abs(rate) <= fastestTurn else { continue }
            rates.append(CourseRate(middle: (a.time + b.time) / 2, length: dt, rate: rate, speedBefore: a.speed ?? 0, speedAfter: b.speed ?? 0))
        }
        return rates
    }

    /// The two rates' correlation with the track shifted by `offset`.
    static func match(_ rates: [CourseRate], _ heading: GyroHeading, offset: Double) -> Match? {
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0
        for r in rates {
            let m = r.middle + offset
            guard let a = heading.at(m - r.length / 2), let b = heading.at(m + r.length / 2) else { continue }
            let x = r.rate, y = (b - a) / r.length
            n += 1; sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y
        }
        guard Int(n) >= leastIntervals else { return nil }
        let vx = sxx / n - (sx / n) * (sx / n), vy = syy / n - (sy / n) * (sy / n)
        guard vx >= leastTurning * leastTurning, vy >= leastTurning * leastTurning else { return nil }
        return Match(offset: offset, correlation: (sxy / n - sx / n * sy / n) / (vx * vy).squareRoot(), intervals: Int(n))
    }

    /// The gyroscope's heading (degrees, clockwise about the recording's mean "up", from 0 at its start) on a uniform
    /// grid, for the rate between any two instants in O(1).
    struct GyroHeading {
        static let step = 0.1
        var start: Double
        var end: Double
        var values: [Double]

        init?(_ samples: [IMUSample]) {
            guard samples.count >= 2, let t0 = samples.first?.time, let t1 = samples.last?.time, t1 - t0 >= 2 * Self.step else { return nil }
            let sum = samples.reduce(Vector3.zero) { $0 + $1.accelerometer }
            guard sum.length > 0 else { return nil }
            let up = sum.normalized
            start = t0
            end = t1
            let count = Int(((t1 - t0) / Self.step).rounded(.down)) + 1
            values = []
            values.reserveCapacity(count)
            var psi = 0.0, i = 0
            for k in 0..<count {
                let t = t0 + Double(k) * Self.step
                // Integrate the rate (clockwise about up: a course's sense) sample by sample up to t.
                while i + 1 < samples.count, samples[i + 1].time <= t {
                    let dt = samples[i + 1].time - samples[i].time
                    psi -= samples[i].gyroscope.dot(up) * dt * 180 / .pi
                    i += 1
                }
                let partial = i + 1 < samples.count ? -samples[i].gyroscope.dot(up) * (t - samples[i].time) * 180 / .pi : 0
                values.append(psi + partial)
            }
        }

        /// ψ at `t` (linear between grid points); nil outside the recording.
        func at(_ t: Double) -> Double? {
            let p = (t - start) / Self.step
            guard p >= 0, p <= Double(values.count - 1) else { return nil }
            let k = min(Int(p), values.count - 2), f = p - Double(k)
            return values[k] + (values[k + 1] - values[k]) * f
        }
    }
}
