import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The undisturbed Earth field as the magnetometer should see it: its norm (in the magnetometer's units)
/// and its dip below the horizontal (degrees, positive when the field points down, as WMM's inclination).
public struct MagneticFieldReference: Equatable, Sendable, Codable {
    public var norm: Double
    public var dip: Double

    public init(norm: Double, dip: Double) {
        self.norm = norm
        self.dip = dip
    }
}

/// Magnetic disturbance detection and rejection as in VQF (Laidig & Seel 2023, arXiv:2203.17024, the
/// magnetic disturbance rejection): the field's norm and dip (in the inclination-corrected frame, slightly
/// low-passed) are compared with a reference. Outside `magNormThreshold` (relative) or `magDipThreshold` the
/// field counts as disturbed, and it is undisturbed again after `magMinUndisturbedTime` within them; while
/// undisturbed the reference follows the field with time constant `magRefTau`.
///
/// The reference is either given (e.g. WMM's field at the fix, in the magnetometer's units) or learnt: a
/// candidate norm/dip that the field keeps for `magNewFirstTime` (the first time) or `magNewTime` (a new
/// field, e.g. the board moved to another room), counting only time spent turning faster than
/// `magNewMinGyro` (a field that holds while the board turns is homogeneous), becomes the reference. Unlike VQF,
/// for the first reference time at rest counts too.
///
/// Beyond VQF, the field's heading in the gyroscope's (6D) frame is judged too (`azimuthMoving`): a field fixed in the
/// world that the board passes (a steel desk, a monitor, a car alongside) may turn the horizontal field without moving
/// its norm or dip past the thresholds, and the gyroscope says the board did not turn so.
///
/// While disturbed, the heading correction is off for up to `magMaxRejectionTime`, then runs
/// `magRejectionFactor` times slower; undisturbed time pays the rejection time back at that factor.
public struct MagneticDisturbanceDetector: Sendable {
    /// Whether the field is disturbed: its norm or dip off the reference, or its heading in the gyroscope's frame moving.
    public var disturbed: Bool { fieldDisturbed || azimuthMoving }
    private var fieldDisturbed = true
    /// The field's heading in the gyroscope's (6D) frame, unwrapped (rad), low-passed over `azimuthShortTau` and
    /// over `azimuthLongTau`, and the board's turn rate low-passed over the latter (rad/s).
    private var azimuth: (last: Double, short: Double, long: Double, turn: Double)?
    /// Seconds the norm and dip have stayed within the reference since the last disturbance (or since the reference).
    private var quietFor = 0.0
    /// Whether the field's heading in the gyroscope's frame moved more than the gyroscope's errors allow.
    public private(set) var azimuthMoving = false
    /// The accepted reference; nil until one is given or learnt.
    public private(set) var reference: MagneticFieldReference?
    /// The latest (low-passed) norm and dip, dip in degrees.
    public private(set) var current = MagneticFieldReference(norm: 0, dip: 0)
    /// Seconds of the disturbance going on (judged against a reference) during which the heading correction was off
    /// (`gain` gave 0): how long the heading has ridden on the gyroscope alone. It stops growing once the rejection time
    /// runs out and the heading follows the field again at `magRejectionFactor` times its rate; 0 while undisturbed.
    public private(set) var heldFor = 0.0

    private var referenceNorm = 0.0
    private var referenceDip = 0.0
    /// The reference given from outside (`setReference`: WMM's at the fix), norm and dip (radians); the field that meets
    /// it is undisturbed whatever reference was learnt since.
    private var given: (norm: Double, dip: Double)?
    /// The reference in force is the one given, and the field has neither met it nor held another since it was given:
    /// a field that holds then becomes the reference after `magNewTime` whether or not the board turns, where VQF
    /// counts only time turning faster than `magNewMinGyro` (20 °/s). WMM's field is a model's: a calibration that
    /// scales the field to another magnitude (one learnt before the first fix, a chip's gain), a fallback position far
    /// from the board or a site off the model held the field disturbed for ever on a board turning slower than that
    /// (a boat, the simulator's 6 °/s), the heading on the gyroscope and then at half the rate, and online calibration
    /// learnt nothing: 16.62° off with the gyroscope 0.3 °/s off, against 2.82° with the right reference
    /// (`AttitudeFilterTests.testAGivenReferenceTheFieldNeverMatchesGivesWayToTheFieldTheBoardTurnsIn`).
    private var givenUntested = false
    private var candidateNorm = -1.0
    private var candidateDip = 0.0
    private var candidateTime = 0.0
    private var undisturbedTime = 0.0
    /// Seconds of rejection run up and not yet paid back (`gain`): the heading is held while it is within
    /// `magMaxRejectionTime`. It starts spent, as VQF's does: a field learnt on the spot, or one judged through a
    /// calibration just changed, is not trusted to hold the heading against for long. A reference given from outside
    /// before any was known (WMM's, which the daemon gives from its start once a calibration is in force) is: the
    /// rejection time is then paid (`setReference`). Spent, a magnet 2 s after the daemon's start was
    /// held 3 s, not the 30 s it stayed, and the heading then followed it at half the rate, 30° off by its end
    /// (`AttitudeFilterTests.testAGivenReferenceHoldsADisturbanceRightAfterTheStart`). Paid after every calibration
    /// change too, the simulated drives without GNSS were a little worse (up to 0.33° on a seed, medians up to 0.1°).
    private var rejectionTime: Double
    private var normDipLowPass: ButterworthLowPass<Vector3>
    private let p: AttitudeFilterParameters

    /// A `reference` given here is the field watched afresh (after a calibration change, or a gap): the rejection time
    /// starts spent all the same. One given first through `setReference` starts it paid.
    public init(parameters: AttitudeFilterParameters, reference: MagneticFieldReference? = nil) {
        p = parameters
        normDipLowPass = ButterworthLowPass(tau: parameters.magCurrentTau)
        rejectionTime = 0
        if let reference { setReference(reference) }
        rejectionTime = parameters.magMaxRejectionTime
    }

    /// Takes `reference`, given from outside (WMM's at the fix), as the undisturbed field (it still follows the field
    /// while undisturbed). The first known, given before the detector learnt one, starts the rejection time paid
    /// (`rejectionTime`). It replaces the reference in force only where that is the one given before (or near it), or
    /// none was: a field learnt because the given one was never met (`givenUntested`) stays, and the new one given is
    /// only its alternative (the daemon gives WMM's again each time the fix moves about 1 km).
    public mutating func setReference(_ reference: MagneticFieldReference) {
        guard reference.norm > 0, reference.norm.isFinite, reference.dip.isFinite else { return }
        let dip = reference.dip * .pi / 180
        let followsGiven = given.map { matches(norm: referenceNorm, dip: referenceDip, $0.norm, $0.dip) } ?? true
        given = (reference.norm, dip)
        guard referenceNorm == 0 || followsGiven else { return }
        if referenceNorm == 0 { rejectionTime = 0 }
        referenceNorm = reference.norm
        referenceDip = dip
        self.reference = reference
        givenUntested = true
    }

    /// Whether a norm and dip (radians) lie within the disturbance thresholds of another's.
    private func matches(norm: Double, dip: Double, _ otherNorm: Double, _ otherDip: Double) -> Bool {
        abs(norm - otherNorm) < p.magNormThreshold * otherNorm && abs(dip - otherDip) < p.magDipThreshold * .pi / 180
    }

    /// Judges a field sample in the inclination-corrected frame (z up); `turnRate` is the low-passed
    /// gyroscope rate's magnitude, rad/s; `dt` the seconds since the previous magnetometer sample. `gyroscope`: whether
    /// that frame turns with the board (a gyroscope's), so that the field's heading in it is judged too.
    public mutating func observe(earthField b: Vector3, turnRate: Double, dt: Double, gyroscope: Bool = true) {
        let norm = b.length
        guard norm > 0 else { return }
        let raw = Vector3(norm, -asin(max(-1, min(1, b.z / norm))), 0)
        let filtered = normDipLowPass.step(raw, dt: dt)
        let (n, dip) = (filtered.x, filtered.y)
        current = MagneticFieldReference(norm: n, dip: dip * 180 / .pi)
        let kReference = 1 - exp(-dt / p.magRefTau)

        if gyroscope { observeAzimuth(b, turnRate: turnRate, dt: dt) } else { azimuthMoving = false }
        let metGiven = given.map { matches(norm: n, dip: dip, $0.norm, $0.dip) } ?? false
        let metReference = matches(norm: n, dip: dip, referenceNorm, referenceDip)
        if metReference || metGiven {
            undisturbedTime += dt
            if undisturbedTime >= p.magMinUndisturbedTime {
                fieldDisturbed = false
                givenUntested = false
                // The field given from outside met again after one learnt in its place: it is the reference again.
                if !metReference, let given { (referenceNorm, referenceDip) = given }
                referenceNorm += kReference * (n - referenceNorm)
                referenceDip += kReference * (dip - referenceDip)
                publishReference()
            }
        } else {
            undisturbedTime = 0
            fieldDisturbed = true
        }
        quietFor = fieldDisturbed || referenceNorm == 0 ? 0 : quietFor + dt

        if matches(norm: n, dip: dip, candidateNorm, candidateDip) {
            // Turning, a field that holds is homogeneous; still, any field holds. VQF counts only time turning, for
            // the first reference too; here, with no reference at all, time still counts: a board starts at rest in
            // the field it will move in far more often than beside a magnet, and with no reference nothing is
            // judged disturbed, so a magnet that comes before the first turn became the reference (BROAD trial 33's,
            // 3 s before the movement).
            if turnRate >= p.magNewMinGyro * .pi / 180 || referenceNorm == 0 || givenUntested { candidateTime += dt }
            candidateNorm += kReference * (n - candidateNorm)
            candidateDip += kReference * (dip - candidateDip)
            let needed = referenceNorm == 0 ? p.magNewFirstTime : p.magNewTime
            if fieldDisturbed && (candidateTime >= p.magNewTime || candidateTime >= needed) {
                referenceNorm = candidateNorm
                referenceDip = candidateDip
                publishReference()
                givenUntested = false
                fieldDisturbed = false
                undisturbedTime = p.magMinUndisturbedTime
            }
        } else {
            candidateTime = 0
            candidateNorm = n
            candidateDip = dip
        }
    }

    /// The field's heading in the gyroscope's frame (`b` is in it): it stays put but for the gyroscope's own errors (a
    /// share of the board's turn for its scale error, slowly for its bias), where a field fixed in the world that the
    /// board passes turns it without changing the norm or dip much.
    private mutating func observeAzimuth(_ b: Vector3, turnRate: Double, dt: Double) {
        let (shortTau, longTau, threshold) = (Self.azimuthShortTau, Self.azimuthLongTau, Self.azimuthThreshold * .pi / 180)
        guard b.x * b.x + b.y * b.y > 1e-12 * b.dot(b) else { azimuthMoving = false; return }
        var psi = atan2(b.x, b.y)
        guard var a = azimuth else {
            azimuth = (psi, psi, psi, turnRate)
            return
        }
        psi = a.last + remainder(psi - a.last, 2 * .pi)
        a.last = psi
        a.short += (psi - a.short) * (1 - exp(-dt / shortTau))
        a.long += (psi - a.long) * (1 - exp(-dt / longTau))
        a.turn += (turnRate - a.turn) * (1 - exp(-dt / longTau))
        azimuth = a
        azimuthMoving = quietFor >= Self.azimuthQuietTime && abs(a.short - a.long) > threshold + Self.azimuthTurnShare * a.turn * longTau
    }

    /// The field's heading in the gyroscope's frame, low-passed over `azimuthShortTau` (s), moving from its mean over
    /// `azimuthLongTau` (s) by more than `azimuthThreshold` (degrees) plus `azimuthTurnShare` of the board's turn over
    /// that time is a field that turns in the world: the heading rides the gyroscope while it does. The share covers a
    /// gyroscope's scale error (0.5–3 %; a board spinning at 400 °/s with 2 % moves its field heading by 8 °/s and is
    /// not held) and the field's lag on the gyroscope as the board turns. Measured (2026-12-05) through `bearing
    /// attitude` on BROAD with the fields the board passes (`BROADTrialTests.testFieldsTheBoardPassesAsItIsCarriedAbout`):
    /// 1.28° of mean heading at 2° (1.77° without the test); `scripts/bench-attitude --passing-fields`' other fields 2.21°
    /// at 2°, 2.23° at 3° (2.50° without).
    static let azimuthShortTau = 0.3
    static let azimuthLongTau = 3.0
    static let azimuthThreshold = 2.0
    static let azimuthTurnShare = 0.03
    /// The test runs only once the norm and dip have held the reference for this long (s), and never in the seconds after a
    /// calibration change (`AttitudeFilter.magnetometerRecalibrated` starts a new detector). A field fixed to the board that
    /// the calibration in force does not explain (a magnet before it is learnt, what a fit leaves) turns with the board,
    /// and its heading in the gyroscope's frame moves as the board turns: at 0 s BROAD's magnet tables
    /// (`BROADTrialTests.testTrial33sMagnetAtOtherDistances`' 15 runs) went 1.47° → 2.74° of mean heading, at 4 s 1.88°,
    /// at 8 s 1.44°; the bench's passing fields 1.76°, 1.94° and 2.21° (2.50° without); the undisturbed seconds between
    /// fields in a real office are not known.
    static let azimuthQuietTime = 8.0

    /// The heading-correction gain to use for a sample of `dt` seconds, given the undisturbed gain `k`:
    /// 0 during a disturbance up to `magMaxRejectionTime`, `k / magRejectionFactor` after that.
    public mutating func gain(_ k: Double, dt: Double) -> Double {
        let disturbed = self.disturbed
        if disturbed {
            if rejectionTime <= p.magMaxRejectionTime {
                rejectionTime += dt
                if referenceNorm > 0 { heldFor += dt }
                return 0
            }
            return k / p.magRejectionFactor
        }
        heldFor = 0
        rejectionTime = max(rejectionTime - p.magRejectionFactor * dt, 0)
        return k
    }

    private mutating func publishReference() {
        reference = MagneticFieldReference(norm: referenceNorm, dip: referenceDip * 180 / .pi)
    }
}
