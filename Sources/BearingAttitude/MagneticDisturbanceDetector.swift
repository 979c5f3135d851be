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
/// While disturbed, the heading correction is off for up to `magMaxRejectionTime`, then runs
/// `magRejectionFactor` times slower; undisturbed time pays the rejection time back at that factor.
public struct MagneticDisturbanceDetector: Sendable {
    public private(set) var disturbed = true
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
    private var candidateNorm = -1.0
    private var candidateDip = 0.0
    private var candidateTime = 0.0
    private var undisturbedTime = 0.0
    private var rejectionTime: Double
    private var normDipLowPass: ButterworthLowPass<Vector3>
    private let p: AttitudeFilterParameters

    public init(parameters: AttitudeFilterParameters, reference: MagneticFieldReference? = nil) {
        p = parameters
        rejectionTime = parameters.magMaxRejectionTime
        normDipLowPass = ButterworthLowPass(tau: parameters.magCurrentTau)
        if let reference { setReference(reference) }
    }

    /// Takes `reference` as the undisturbed field (it still follows the field while undisturbed).
    public mutating func setReference(_ reference: MagneticFieldReference) {
        guard reference.norm > 0, reference.norm.isFinite, reference.dip.isFinite else { return }
        referenceNorm = reference.norm
        referenceDip = reference.dip * .pi / 180
        self.reference = reference
    }

    /// Judges a field sample in the inclination-corrected frame (z up); `turnRate` is the low-passed
    /// gyroscope rate's magnitude, rad/s; `dt` the seconds since the previous magnetometer sample.
    public mutating func observe(earthField b: Vector3, turnRate: Double, dt: Double) {
        let norm = b.length
        guard norm > 0 else { return }
        let raw = Vector3(norm, -asin(max(-1, min(1, b.z / norm))), 0)
        let filtered = normDipLowPass.step(raw, dt: dt)
        let (n, dip) = (filtered.x, filtered.y)
        current = MagneticFieldReference(norm: n, dip: dip * 180 / .pi)
        let dipThreshold = p.magDipThreshold * .pi / 180
        let kReference = 1 - exp(-dt / p.magRefTau)

        if abs(n - referenceNorm) < p.magNormThreshold * referenceNorm && abs(dip - referenceDip) < dipThreshold {
            undisturbedTime += dt
            if undisturbedTime >= p.magMinUndisturbedTime {
                disturbed = false
                referenceNorm += kReference * (n - referenceNorm)
                referenceDip += kReference * (dip - referenceDip)
                publishReference()
            }
        } else {
            undisturbedTime = 0
            disturbed = true
        }

        if abs(n - candidateNorm) < p.magNormThreshold * candidateNorm && abs(dip - candidateDip) < dipThreshold {
            // Turning, a field that holds is homogeneous; still, any field holds. VQF counts only time turning, for
            // the first reference too; here, with no reference at all, time still counts: a board starts at rest in
            // the field it will move in far more often than beside a magnet, and with no reference nothing is
            // judged disturbed, so a magnet that comes before the first turn became the reference (BROAD trial 33's,
            // 3 s before the movement).
            if turnRate >= p.magNewMinGyro * .pi / 180 || referenceNorm == 0 { candidateTime += dt }
            candidateNorm += kReference * (n - candidateNorm)
            candidateDip += kReference * (dip - candidateDip)
            let needed = referenceNorm == 0 ? p.magNewFirstTime : p.magNewTime
            if disturbed && (candidateTime >= p.magNewTime || candidateTime >= needed) {
                referenceNorm = candidateNorm
                referenceDip = candidateDip
                publishReference()
                disturbed = false
                undisturbedTime = p.magMinUndisturbedTime
            }
        } else {
            candidateTime = 0
            candidateNorm = n
            candidateDip = dip
        }
    }

    /// The heading-correction gain to use for a sample of `dt` seconds, given the undisturbed gain `k`:
    /// 0 during a disturbance up to `magMaxRejectionTime`, `k / magRejectionFactor` after that.
    public mutating func gain(_ k: Double, dt: Double) -> Double {
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
