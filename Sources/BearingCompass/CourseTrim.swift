import BearingCalibration
import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// On land, going straight at speed, the course over ground is the vehicle's heading: a reference of its own,
/// independent of the magnetometer. The compass heading (calibrated, with the deviation learnt from driving, which
/// carries the mounting's offset) still errs by what changes with time and place: a hard iron that moves with the
/// loads switched on, the street's own field, the local field's departure from WMM's. `CourseTrim` learns that
/// error from the straight epochs (`PassiveDeviation.straight`: fast enough, turning slowly enough, the speed known
/// well enough) as a trim added to the heading, an exponential mean with `timeConstant` (at 1 Hz, each epoch's
/// own). Between straight epochs (through a turn, at a stop, in a GNSS outage) the gyroscope carries the heading
/// given at the last one: the trim at each sample is what brings the compass to it, whatever the compass does
/// meanwhile (another heading has another error; the street's field and a stop's wander are not turns). The
/// gyroscope's own drift grows with time, so the trim fades to the compass's as 1/(1 + (t/T)²), t the seconds since
/// the last straight epoch and T (`fadeTime`) `holdTime` scaled down by the drift the window's fit last found:
/// `holdTime`·`driftScale`/(`driftScale` + |drift|), half of `holdTime` when no fit found one (600 s for a gyroscope
/// that does not drift, 300 s for one drifting 0.02 °/s, which is then 6° off where the trim weighs half, 44 s at
/// 0.25 °/s). Before: T 120 s whatever the drift; a three-minute GNSS outage on the simulated drives was 4.1°
/// (worst seed 13.5°) with it, 2.0° (4.6°) now (a fixed T of 600 s gave 1.5°, 3.4°, but holds a gyroscope that
/// drifts as long); the compass's own heading gave 9.8° (30.8°) before the gyroscope carried the trim. Pure: times
/// are the samples' (a fix's epoch is taken when it arrives, `AttitudeFusion`).
///
/// **The course carried by the gyroscope.** An epoch's course is not taken as it comes: a receiver's course is noisy
/// and jumps with multipath (a position by metres for seconds, a velocity by a metre a second), and one from
/// positions, which spans the epochs either side, jumps by tens of degrees at each end of a position's jump. The
/// gyroscope's heading turns with the road as the vehicle does, so course − gyroscope heading (the *offset*) stays
/// put from one straight to the next, whatever the street's field does to the compass. The course an epoch gives is
/// the gyroscope's heading now plus the offset now as the straight epochs of the last `window` seconds give it: two
/// minutes of GNSS noise and jumps in one value that turns with the road at once, while the compass's own error may
/// change as fast as the street's field does, which the trim then follows. The gyroscope's own errors move the
/// offset, and are fitted with it (`robustFit`: Huber-weighted least squares) on the window's steady epochs
/// (`steadyRate`: in a road's long curve a course lags the heading by what the road turned in the second before it):
/// - its scale factor by a share of each turn (an MPU-9250's sensitivity is ±3 % from nominal: 2.7° in a
///   right-angle turn): where the window spans `scaleTurn` degrees of turn, the offset is fitted against the turn
///   (and time), and the median of the last `scaleMemory` epochs' slopes, believed in proportion to the turns seen
///   (`scaleEvidence`), is the scale the offsets are corrected by;
/// - its bias, until the attitude filter learns it at a rest (a noisy accelerometer may never show one), by a degree
///   every few seconds: with `driftEpochs` epochs over `driftSpan` seconds, the offset now is the fit's against time,
///   not the window's median.
///
/// With fewer than three straight epochs in the window (the first straight, or after `turnGap` seconds without an
/// epoch, when the turn since is not known), an epoch gives its own course, once the straight has lasted `settle`
/// seconds, with `rawTimeConstant`: a course describes the motion of the second or two before it (a receiver's
/// velocity lags the fix; a course from positions spans the epochs either side), so the first epochs out of a turn
/// carry some of the turn. A course that disagrees with the heading by more than `outlier` degrees (a car
/// reversing) is not taken.
public struct CourseTrim: Sendable {
    public var timeConstant = 1.0
    public var rawTimeConstant = 5.0
    public var holdTime = 600.0
    /// The drift (°/s) at which `fadeTime` is half of `holdTime`.
    public var driftScale = 0.02
    public var outlier = 15.0
    public var settle = 2.0
    public var window = 120.0
    public var scaleTurn = 30.0
    /// Epochs further apart than this (s) are a sparse track's (a logger writing every few seconds), whose courses from
    /// positions span seconds of the drive either side of each.
    public var sparseInterval = 1.5
    /// In a sparse track an epoch's course counts as straight only where the gyroscope turned less than this (degrees)
    /// from the epoch before to it, and from it to the next (`turn(to:at:)`): the epochs beside a turn, their chords
    /// bent by it, would otherwise teach the window a gyroscope scale 2–3 % off (a track logged every 5 s).
    public var chordTurn = 1.5
    public var driftEpochs = 20
    public var driftSpan = 30.0
    /// How many epochs' slopes the scale is the median of (fixed: the running median is sized by it).
    public static let scaleMemory = 600
    /// The largest scale factor error believed (a share: 0.05 is 5 %).
    public var largestScale = 0.05
    /// The turn (degrees) whose fit weighs as much as the belief that the gyroscope's scale is right. A bend of θ
    /// between two straights measures the scale to about √2·σ/θ, σ the error of a straight's course that lasts the
    /// minute or so of a straight (the same satellites, the same multipath along a street: about 1°), and a MEMS
    /// gyroscope's scale is within about 2 % (an MPU-9250's ±3 % at 1.5 σ): the two weigh alike at θ = √2·1°/0.02, 71°.
    /// The scale the offsets are corrected by is the fitted one times E/(E + `scaleEvidence`²), E the sum of the
    /// squared turns between the window's steady epochs: one 32° bend a sixth of it, a right-angle corner 62 %, six of
    /// them 91 %. Before, ten epochs' slopes from one bend were believed in full (simulated seed 46: 6–7 % learnt from
    /// one bend against the course's slow error, for a gyroscope 1.25 % off, each corner after it 3–5° wrong).
    public var scaleEvidence = 71.0
    /// The window's fits take the epochs at which the gyroscope turned at most this (°/s) since the epoch before, where
    /// at least three did. An epoch is straight up to 2 °/s (a road's long curve), but its course describes the second or
    /// so before its fix (a receiver's velocity lags, a course from positions spans the epochs either side): `lag · ω`
    /// behind the heading, 2° at 2 °/s, which a fit against the turn took for the gyroscope's scale (a perfect one taught
    /// 1.1 %) and the window's median or fit for the offset (the trim 1.4° off on the straights after such curves).
    public var steadyRate = 0.5
    /// A straight's course error that lasts (degrees, 1 σ): the same satellites and multipath for a minute or more.
    public var courseError = 1.0
    /// The drift (°/s, 1 σ) a gyroscope's bias measured at a rest leaves (`straightEpoch(…sinceRest:)`), growing by
    /// `restDriftGrowth` a second since: the window's fit against time weighs a drift against it, as a Gaussian prior
    /// (ridge regression: (`courseError` / σ)² added to the normal equations' age·age sum: 40,000 s² at the rest, as
    /// much as 40 epochs a minute away, about 4,400 s² five minutes on, σ 0.015 °/s). Fitted freely, the youngest
    /// epochs sit at the end of the fit's lever, and a multipath jump among them (5.6° for 8 s)
    /// tilted it into a drift and the offset now with it (`CourseTrimTests.testAJumpAtTheWindowsYoungEndIsNoDriftWhenTheBiasIsMeasured`:
    /// the trim 0.98° → 0.33° off). Where no rest measured the bias lately (`AttitudeFusion.biasStaleTime`: a noisy
    /// accelerometer, a motorway), the fit is free, as a gyroscope drifting 0.25 °/s needs.
    public var restDrift = 0.005
    /// How fast (°/s a second) the drift a rest leaves may grow: a bias wanders with temperature, 0.002 °/s a minute.
    public var restDriftGrowth = 0.002 / 60
    /// A straight epoch more than this many seconds after the one before starts another straight.
    public var gap = 3.0
    public var turnGap = 10.0
    /// The trim (degrees, added to the heading) and the time it was last learnt at.
    public private(set) var trim = 0.0
    public private(set) var learntAt: Double?
    /// Straight epochs taken since the trim last faded to nothing.
    private var epochs = 0
    /// When this straight began (its first epoch): nil between straights.
    private var straightSince: Double?
    /// The gyroscope's heading at the last epoch, straight or not, how far it had turned then since the window began
    /// (degrees, unwrapped), and that epoch's time.
    private var gyro: (heading: Double, turned: Double, time: Double)?
    /// The straight epochs of the last `window` seconds, this straight's and those before: time, offset (degrees), how
    /// far the gyroscope had turned, and whether it turned at most `steadyRate` since the epoch before.
    private var recent: [(time: Double, offset: Double, turned: Double, steady: Bool)] = []
    /// The epochs' slopes of offset against turn: the gyroscope's scale factor error, negated (it reads 1 + e times
    /// the turn: the offset loses e/(1 + e) of each degree it reads).
    private var slopes = RunningMedian(capacity: CourseTrim.scaleMemory)
    /// The sum of the squared turns (degrees²) between consecutive steady straight epochs, taken within a window but
    /// kept across windows and frame restarts for the whole drive, as the scale's slopes are; and how far the
    /// gyroscope had turned at the last such epoch (nil when the window started again since).
    private var turnEvidence = 0.0
    private var lastSteadyTurn: Double?
    /// The heading given at the last epoch taken (the trim's), carried by the gyroscope: less the gyroscope's heading
    /// then, how far the gyroscope had turned then, and the scale's slope then.
    private var carry: (offset: Double, turned: Double, slope: Double, followed: Double?)?
    /// The gyroscope's heading as `follow(gyroHeading:)` last had it, and how far it had turned (degrees, unwrapped
    /// sample by sample from any origin): the turn since the carry however long ago the last epoch was. Nil until
    /// followed, and after a gap in the samples (the turn across it is not known).
    private var followed: (heading: Double, turned: Double)?
    /// The drift (°/s) of the gyroscope's heading against the course that the window's fit last found (nil: none yet).
    private var drift: Double?
    /// Epochs the gate refused in a row whose course the window carried, and the offset (course − gyroscope heading)
    /// the latest carried.
    private var refusals: (count: Int, offset: Double)?
    /// Epochs in a row, refused and carried alike by the window (within a third of `outlier`), that the gate then takes:
    /// what was carried is what was wrong.
    public var refusalsToYield = 3
    /// A gap in the gyroscope's samples longer than this (s) leaves the turn across it unknown
    /// (`gyroscopeGap(seconds:)`).
    public var gapBreak = 1.5
    /// The fastest a vehicle is taken to turn (°/s): across a gap of `g` seconds its heading may be off by up to
    /// `g` times this.
    public var fastestTurn = 20.0
    /// After a gap, how many straight epochs must agree (within `gapAgreement` degrees of their median offset)
    /// before one is taken: their median, not one course (one course from positions may be tens of degrees off at
    /// each end of a multipath jump).
    public var gapEpochs = 3
    public var gapAgreement = 3.0
    /// After a gap: how far (degrees) the heading carried across it may be off, until an epoch is taken.
    private var gapUncertainty: Double?

    public init() {}

    /// `seconds` of the gyroscope's samples were lost: over `gapBreak`, the turn across them is not known (the
    /// attitude filter bridges a gap with the mean of the rates either side, `AttitudeFilter.gapInterval`, and a car
    /// may take half a corner in three seconds). The window's offsets (course − gyroscope heading) from before no
    /// longer hold after it, and the heading carried across may be off by up to `seconds` × `fastestTurn`. So the
    /// window starts again, and the first straight epochs after the gap are taken once `gapEpochs` of them agree
    /// (their median, at once, however far from the heading carried, within `outlier` + that bound). The trim
    /// carried until then stays: on a straight the gap turned nothing, and it is right. Unless the attitude filter did not
    /// bridge the gap (`bridged` false, `AttitudeFilter.longestBridge`): the gyroscope's heading after it is not the one
    /// the trim was carried in, and the heading is the compass's until the course is taken again.
    public mutating func gyroscopeGap(seconds: Double, bridged: Bool = true) {
        guard seconds > gapBreak, seconds.isFinite else { return }
        gyro = nil  // the next epoch's `turn(to:at:)` starts the window again and drops the scale carried
        straightSince = nil
        refusals = nil
        gapUncertainty = min(180, max(gapUncertainty ?? 0, seconds * fastestTurn))
        followed = nil
        carry?.followed = nil
        if !bridged { carry = nil }
    }

    /// The gyroscope's heading at a sample (degrees, as given to `straightEpoch`), followed between epochs: the scale's
    /// correction (`trim(at:gyroHeading:time:)`) then holds for the whole turn since the last epoch taken, not only while
    /// epochs come (a GNSS outage, a stop, a car park). Without it a turn `turnGap` seconds after the last epoch was
    /// carried by the gyroscope's scale as it reads: a corner 2.7° off at 3 % (`RoadDriveTests.testAThreeMinuteGNSSOutage`).
    public mutating func follow(gyroHeading: Double) {
        guard gyroHeading.isFinite else { return }
        followed = (gyroHeading, followedTurn(at: gyroHeading) ?? 0)
    }

    /// How far the gyroscope followed has turned (degrees, from `followed`'s origin) when its heading is `gyroHeading`;
    /// nil while it is not followed.
    private func followedTurn(at gyroHeading: Double) -> Double? {
        followed.map { $0.turned + SwingSolver.wrap180(gyroHeading - $0.heading) }
    }

    /// Whether the straight epochs since a gap, with one more of `offset`, agree enough to be taken: `gapEpochs` of
    /// them within `gapAgreement` of their median.
    private func agreeAfterGap(_ offset: Double) -> Bool {
        let offsets = recent.map { offset + SwingSolver.wrap180($0.offset - offset) } + [offset]
        guard offsets.count >= gapEpochs else { return false }
        let middle = Self.median(offsets)
        return offsets.filter { abs($0 - middle) <= gapAgreement }.count >= gapEpochs
    }

    /// The gyroscope's scale factor error as the offsets give it (0.02: it reads 2 % too much), nil before any turn.
    public var gyroScaleError: Double? {
        slopes.count < 10 ? nil : slopes.median.map { -$0 / (1 + $0) }
    }

    /// The slope (offset against turn) the offsets are corrected by: the fitted one, within `largestScale`, weighed
    /// against the belief that the scale is right by the turns seen (`scaleEvidence`).
    private var scaleSlope: Double {
        guard slopes.count >= 10, let median = slopes.median else { return 0 }
        let e = scaleEvidence * scaleEvidence
        return max(-largestScale, min(largestScale, median)) * turnEvidence / (turnEvidence + e)
    }

    /// An epoch that was not going straight (turning, slow, its speed not known well enough) at `time`, with the
    /// gyroscope's heading then: the straight ends.
    public mutating func interrupt(gyroHeading: Double, time: Double) {
        straightSince = nil
        _ = turn(to: gyroHeading, at: time)
    }

    /// One straight epoch at `time`: the course (degrees, the heading's north: magnetic when `heading` is), the
    /// heading given then without the trim, and the gyroscope's heading then (degrees, from any start: the attitude
    /// filter's 6D heading, which the magnetometer never turns); `sinceRest`: the seconds since a rest measured the
    /// gyroscope's bias, nil where none did lately (`restDrift`). Returns whether it was taken.
    @discardableResult
    public mutating func straightEpoch(course: Double, heading: Double, gyroHeading: Double, time: Double,
                                       sinceRest: Double? = nil) -> Bool {
        guard course.isFinite, heading.isFinite, gyroHeading.isFinite, time.isFinite else { return false }
        if let last = recent.last, time - last.time > gap { straightSince = nil }
        let (turned, bent, steady) = turn(to: gyroHeading, at: time)
        guard !bent else {
            straightSince = nil
            return false
        }
        let since = straightSince ?? time
        straightSince = since
        let offset = SwingSolver.wrap180(course - gyroHeading)
        recent.removeAll { time - $0.time > window }
        let carried: Double
        var tau = timeConstant
        var fromWindow = false
        if steady {
            if let last = lastSteadyTurn { turnEvidence += (turned - last) * (turned - last) }
            lastSteadyTurn = turned
        }
        var slope = scaleSlope
        // After a gap, nothing until the epochs since agree; then their median.
        if gapUncertainty != nil, !agreeAfterGap(offset) {
            recent.append((time, offset, turned, steady))
            return false
        }
        if recent.count >= 3 || gapUncertainty != nil {
            fromWindow = true
            // The window's offsets unwrapped about the one carried (this epoch's may be anything), their ages (s, ≤ 0)
            // and how far the gyroscope has turned since each (degrees), this epoch's last.
            // Steady epochs only, where at least three are (`steadyRate`).
            let center = carry?.offset ?? offset
            let all = recent + [(time, offset, turned, steady)]
            let steadyOnes = all.filter(\.steady)
            let taken = steadyOnes.count >= 3 ? steadyOnes : all
            var offsets = taken.map { center + SwingSolver.wrap180($0.offset - center) }, ages = taken.map { $0.time - time }
            let turns = taken.map { $0.turned - turned }
            let ridge = sinceRest.map { courseError / (restDrift + restDriftGrowth * max(0, $0)) }.map { $0 * $0 } ?? 0
            if (turns.max() ?? 0) - (turns.min() ?? 0) >= scaleTurn, let fit = Self.robustFit(offsets, ages, turns, cut: outlier, ridge: ridge) {
                slopes.add(fit.slope)
                slope = scaleSlope
            }
            for i in offsets.indices { offsets[i] -= slope * turns[i] }
            // With enough of a window to tell a drift from noise, the offset now is the fit's, drift included (a bias
            // not yet learnt moves it by a degree every few seconds); with less, the window's median.
            if offsets.count >= driftEpochs, -(ages.first ?? 0) >= driftSpan, let fit = Self.robustFit(offsets, ages, nil, cut: outlier, ridge: ridge) {
                carried = gyroHeading + fit.offset
                drift = fit.drift
            } else {
                carried = gyroHeading + Self.median(offsets)
            }
        } else {
            // Too few to carry a course: this epoch's own, once the straight has settled.
            guard time - since >= settle else {
                recent.append((time, offset, turned, steady))
                return false
            }
            carried = course
            tau = rawTimeConstant
        }
        recent.append((time, offset, turned, steady))
        let current = trim(at: heading, gyroHeading: gyroHeading, time: time)
        let error = SwingSolver.wrap180(carried - heading)
        if abs(error - current) > outlier + (gapUncertainty ?? 0) {
            let offset = carried - gyroHeading
            guard fromWindow else {
                refusals = nil
                return false
            }
            let alike = refusals.map { abs(SwingSolver.wrap180(offset - $0.offset)) <= outlier / 3 } ?? false
            refusals = (alike ? refusals!.count + 1 : 1, offset)
            guard refusals!.count >= refusalsToYield else { return false }
            epochs = 0
        }
        refusals = nil
        if gapUncertainty != nil { epochs = 0 }
        gapUncertainty = nil
        if fade(time) < 0.5 { epochs = 0 }
        epochs += 1
        let dt = learntAt.map { max(0, time - $0) } ?? 1
        let k = max(1 / Double(epochs), min(1, dt / tau))
        trim = current + k * (error - current)
        learntAt = time
        carry = (SwingSolver.wrap180(heading + trim - gyroHeading), turned, slope, followedTurn(at: gyroHeading))
        return true
    }

    /// The attitude filter restarted: its heading has another origin, and nothing carried in the old one holds. The
    /// gyroscope's scale learnt so far stays (the sensor is the same).
    public mutating func frameRestarted() {
        recent.removeAll()
        gyro = nil
        carry = nil
        drift = nil
        straightSince = nil
        refusals = nil
        gapUncertainty = nil
        trim = 0
        learntAt = nil
        epochs = 0
        followed = nil
    }

    /// The attitude filter's gyroscope bias changed at `time` (learnt at a rest, or in motion): from then on its heading
    /// turns `degreesPerSecond` more a second than before for the same motion. The window's offsets (course − gyroscope
    /// heading) are put as they would have been had the new bias been in force across the window: each one's by
    /// `degreesPerSecond` times its age at `time`, so that the drift the window's fit finds is the one from now on. Left
    /// as they were, a bias of 0.1 °/s learnt at the first stop left a fit that went on taking 0.1 °/s of drift out of a
    /// gyroscope that no longer drifted: 6° a minute later (`RoadDriveTests.testAReceiverGivingFiveOrTenFixesASecond`).
    public mutating func gyroscopeDriftChanged(by degreesPerSecond: Double, at time: Double) {
        guard degreesPerSecond.isFinite, degreesPerSecond != 0, time.isFinite else { return }
        for i in recent.indices { recent[i].offset += degreesPerSecond * (time - recent[i].time) }
        if let d = drift { drift = d - degreesPerSecond }
    }

    /// The gyroscope's heading is given along another axis from now on (a vehicle's forward axis taken or changed,
    /// `AttitudeFusion.mountingAxis`): for the same orientation it reads `degrees` more than before. What was learnt
    /// against it (the window's offsets, the heading carried, the epoch before) is turned with it, so the course
    /// carried is the same one.
    public mutating func gyroscopeHeadingMoved(by degrees: Double) {
        guard degrees.isFinite, degrees != 0 else { return }
        for i in recent.indices { recent[i].offset = SwingSolver.wrap180(recent[i].offset - degrees) }
        if let g = gyro { gyro!.heading = SwingSolver.wrap180(g.heading + degrees) }
        if let c = carry { carry!.offset = SwingSolver.wrap180(c.offset - degrees) }
        if let f = followed { followed!.heading = SwingSolver.wrap180(f.heading + degrees) }
        if let r = refusals { refusals!.offset = SwingSolver.wrap180(r.offset - degrees) }
    }

    /// How far the gyroscope has turned at `heading` (degrees, unwrapped from the epoch before) since the window
    /// began; after `turnGap` seconds without an epoch (or the clock stepped back) the turn since is not known, and
    /// the window starts again. `bent`: a sparse track's epochs (over `sparseInterval` apart) between which the
    /// gyroscope turned more than `chordTurn`: a course from positions spans the epochs either side, so the epoch
    /// before leaves the window (its chord spanned this turn too), and this one is no straight epoch. `steady`: the
    /// gyroscope turned at most `steadyRate` since the epoch before (or the turn since is not known).
    private mutating func turn(to heading: Double, at time: Double) -> (turned: Double, bent: Bool, steady: Bool) {
        guard heading.isFinite, time.isFinite else { return (gyro?.turned ?? 0, false, true) }
        var turned = 0.0, bent = false, steady = true
        if let g = gyro, time > g.time, time - g.time <= turnGap {
            let step = SwingSolver.wrap180(heading - g.heading)
            turned = g.turned + step
            steady = abs(step) <= steadyRate * (time - g.time)
            if time - g.time > sparseInterval, abs(step) > chordTurn {
                bent = true
                if recent.last?.time == g.time { recent.removeLast() }
            }
        } else {
            recent.removeAll()
            lastSteadyTurn = nil
            // The turn since the carry is not known: its scale is not corrected for.
            carry?.turned = 0
            carry?.slope = 0
        }
        gyro = (heading, turned, time)
        return (turned, bent, steady)
    }

    /// The trim to add to `heading` (degrees, without the trim) at `time`, when the gyroscope's heading is
    /// `gyroHeading` (the attitude filter's 6D heading, as given to `straightEpoch`): what brings it to the heading
    /// given at the last epoch taken, carried by the gyroscope since (its scale corrected while the epochs since were
    /// at most `turnGap` apart), faded with the time since.
    public func trim(at heading: Double, gyroHeading: Double, time: Double) -> Double {
        guard let carry else { return 0 }
        var course = gyroHeading + carry.offset
        if carry.slope != 0, let now = followedTurn(at: gyroHeading), let since = carry.followed {
            course += carry.slope * (now - since)
        } else if carry.slope != 0, let g = gyro, time - g.time <= turnGap {
            course += carry.slope * (g.turned + SwingSolver.wrap180(gyroHeading - g.heading) - carry.turned)
        }
        return SwingSolver.wrap180(course - heading) * fade(time)
    }

    /// offset = c + drift·age (+ slope·turn): Huber-weighted least squares (three passes, the threshold 1.5 times
    /// the residuals' robust spread, at least 0.3°), `ridge` (s²) added to the age·age sum: a prior on the drift
    /// (`restDrift`); nil when the points do not determine it. An offset more than
    /// `cut` degrees from the median (the first pass) or from the fit (the next) has no weight at all: a few courses
    /// that are anything (a stop's wandering positions), the youngest in the window, would otherwise lever the drift.
    static func robustFit(_ offsets: [Double], _ ages: [Double], _ turns: [Double]?, cut: Double, ridge: Double = 0) -> (offset: Double, drift: Double, slope: Double)? {
        let n = offsets.count
        let middle = median(offsets)
        var weights = offsets.map { abs($0 - middle) <= cut ? 1.0 : 0 }
        var fit: (offset: Double, drift: Double, slope: Double)?
        for _ in 0..<3 {
            // The normal equations' sums (symmetric 3×3; without turns, the third row and column are the identity's).
            var s00 = 0.0, s01 = 0.0, s02 = 0.0, s11 = 0.0, s12 = 0.0, s22 = 0.0, r0 = 0.0, r1 = 0.0, r2 = 0.0
            for i in 0..<n {
                let w = weights[i], a = ages[i], t = turns?[i] ?? 0, y = offsets[i]
                s00 += w; s01 += w * a; s02 += w * t; s11 += w * a * a; s12 += w * a * t; s22 += w * t * t
                r0 += w * y; r1 += w * a * y; r2 += w * t * y
            }
            s11 += ridge
            if turns == nil { s02 = 0; s12 = 0; s22 = 1; r2 = 0 }
            let m = Matrix3(rows: [Vector3(s00, s01, s02), Vector3(s01, s11, s12), Vector3(s02, s12, s22)])
            guard let inverse = m.inverse else { return fit }
            let x = inverse * Vector3(r0, r1, r2)
            fit = (x.x, x.y, x.z)
            var residuals = [Double](repeating: 0, count: n)
            for i in 0..<n { residuals[i] = abs(offsets[i] - x.x - x.y * ages[i] - x.z * (turns?[i] ?? 0)) }
            let k = max(0.3, 1.5 * 1.4826 * median(residuals))
            for i in 0..<n { weights[i] = residuals[i] <= k ? 1 : residuals[i] <= cut ? k / residuals[i] : 0 }
        }
        return fit
    }

    static func median(_ values: [Double]) -> Double { RunningMedian.median(of: values) }

    /// The seconds after the last straight epoch at which the trim weighs half.
    public var fadeTime: Double {
        holdTime * driftScale / (driftScale + abs(drift ?? driftScale))
    }

    /// How much of the carried heading the trim still gives at `time` (1 at the last epoch taken).
    private func fade(_ time: Double) -> Double {
        guard let learntAt else { return 0 }
        let t = max(0, time - learntAt) / fadeTime
        return 1 / (1 + t * t)
    }
}


/// The median of the latest `capacity` values, kept sorted as they come and go (a value in, the oldest out: a
/// binary search and a move each, not a sort).
struct RunningMedian: Sendable {
    let capacity: Int
    private var fifo: [Double] = []
    private var next = 0
    private var sorted: [Double] = []

    init(capacity: Int) {
        self.capacity = capacity
        fifo.reserveCapacity(capacity)
        sorted.reserveCapacity(capacity)
    }

    mutating func add(_ value: Double) {
        guard value.isFinite else { return }
        if fifo.count < capacity {
            fifo.append(value)
        } else {
            sorted.remove(at: index(of: fifo[next]))
            fifo[next] = value
            next = (next + 1) % capacity
        }
        sorted.insert(value, at: index(of: value))
    }

    var count: Int { sorted.count }

    var median: Double? { sorted.isEmpty ? nil : Self.middle(ofSorted: sorted) }

    /// The median of values already sorted (not empty): the middle one, or the mean of the two middle ones.
    static func middle(ofSorted s: [Double]) -> Double {
        let n = s.count
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
    }

    /// The median of `values` (not empty, none NaN), as `middle(ofSorted:)` gives it of them sorted, the same bits,
    /// found by selection (`MagnetometerCalibrator.kthSmallest`, linear on average) instead of a sort: the course's
    /// window fits take four medians of up to 120 offsets at each fix.
    static func median(of values: [Double]) -> Double {
        var v = values
        let k = v.count / 2
        let upper = MagnetometerCalibrator.kthSmallest(&v, k)
        guard v.count % 2 == 0 else { return upper }
        // The lower middle: the largest of those selection left before `k`, none of which is above it.
        var lower = v[0]
        for x in v[1..<k] where x > lower { lower = x }
        return (lower + upper) / 2
    }

    /// The first index whose value is not below `value`.
    private func index(of value: Double) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let mid = (low + high) / 2
            if sorted[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
