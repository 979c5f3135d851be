import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Orientation from a gyroscope, an accelerometer and (optionally) a magnetometer: the method of VQF,
/// D. Laidig, T. Seel, "VQF: Highly accurate IMU orientation estimation with bias estimation and magnetic
/// disturbance rejection", Information Fusion 91 (2023) 187–204, arXiv:2203.17024, written anew here.
///
/// The orientation is kept as three factors, `quaternion = Rz(δ) ⊗ inclinationCorrection ⊗ strapdown`:
/// - `strapdown` (sensor → almost-inertial frame I): the bias-corrected gyroscope rates integrated, nothing else.
/// - `inclinationCorrection` (I → 6D earth frame): the accelerometer's specific force is rotated into I and
///   low-passed there (second-order Butterworth, `tauAcc`); in I, unlike in the sensor frame, a short
///   acceleration averages out. Each sample turns the correction so that this filtered vector points up.
/// - δ, a rotation about the vertical (6D earth frame → ENU with y magnetic north): a first-order filter
///   (`tauMag`) towards the heading of the magnetometer's field in the 6D earth frame. Being a separate
///   scalar, it never touches the inclination, and the 6D (magnetometer-free) orientation is always there.
///
/// Gyroscope bias is estimated by a Kalman filter: at rest (see `RestDetector`) from the low-passed rate;
/// in motion from the inclination correction's rate, brought into the earth frame with the low-passed
/// rotation, the vertical component (unobservable without the magnetometer) held to zero by a weak
/// artificial measurement. Magnetic disturbances are detected and rejected by `MagneticDisturbanceDetector`.
///
/// Frames: every quaternion rotates sensor-frame vectors into the named frame, `v_ENU = q ⊗ v ⊗ q*`. The ENU
/// frame's y axis is **magnetic** north (rotate by the declination for true north: `trueNorth(declination:)`).
/// Without magnetometer samples (6D) the heading is that of the start, free to drift slowly.
///
/// Samples: each sensor's samples come with the seconds since that sensor's previous sample (`dt`), so the
/// rates may differ and jitter. Feed the samples of all sensors in time order; samples of one instant go
/// gyroscope, accelerometer, magnetometer (`update(gyroscope:accelerometer:magnetometer:dt:)` does that). The
/// timestamped updates (`…(_:at:)`) judge a field sample in the orientation of the instant it describes
/// (`fieldLead(_:)`): with `magDelay` set, that delay before its stamp, turned from the last gyroscope sample's at
/// that sample's rate, whatever order the samples come in; without it, as VQF does, the orientation at hand.
/// Samples with non-finite values, an all-zero accelerometer or magnetometer vector, or a `dt` that is not
/// positive and finite are ignored. Units: rad/s, m/s², any unit for the field (µT when a reference is given).
public struct AttitudeFilter: Sendable {
    public let parameters: AttitudeFilterParameters
    /// Sensor → almost-inertial frame: the integrated, bias-corrected gyroscope.
    public private(set) var strapdown = Quaternion.identity
    /// Almost-inertial frame → 6D earth frame (z up, arbitrary heading).
    public private(set) var inclinationCorrection = Quaternion.identity
    /// δ: 6D earth frame → ENU (y magnetic north), radians about z, in [−π, π].
    public private(set) var headingOffset = 0.0 {
        didSet { headingRotation = .aboutZ(headingOffset) }
    }
    /// `Quaternion.aboutZ(headingOffset)`, kept with it: δ changes with field samples, the orientation is
    /// asked for with every inertial sample.
    private var headingRotation = Quaternion.identity
    /// The gyroscope bias estimate, rad/s, subtracted from every gyroscope sample.
    public private(set) var gyroBias = Vector3.zero
    public private(set) var rest: RestDetector
    public private(set) var magnetic: MagneticDisturbanceDetector
    /// Whether a magnetometer sample has been used (9D); until then the heading is free (6D).
    public private(set) var hasMagnetometer = false
    /// Whether a gyroscope sample came: without one the 6D frame does not turn with the board, and the field's heading
    /// in it says nothing of a disturbance (`MagneticDisturbanceDetector.azimuthMoving`).
    public private(set) var hasGyroscope = false
    /// Whether an accelerometer sample has corrected the inclination yet: before it, "up" is the identity's, not
    /// the sensor's.
    public private(set) var hasInclination = false

    /// Bias covariance, in (0.01 °/s)² as VQF keeps it (numerically kinder than rad/s).
    private var biasCovariance: Matrix3x3
    private var accLowPass: ButterworthLowPass<Vector3>
    private var rotationLowPass: ButterworthLowPass<Matrix3x3>
    private var rotatedBiasLowPass: ButterworthLowPass<Vector3>
    /// A floor under the heading gain in the first `tauMag` seconds: 1, 1/2, 1/3, … (VQF's fast start).
    private var headingGainFloor = 1.0
    /// Seconds the heading has ridden on the gyroscope alone, the field judged disturbed (`MagneticDisturbanceDetector.
    /// heldFor`: at most the rejection time left, kept here: read for every attitude, and a read through `magnetic`
    /// costs a copy of it).
    public private(set) var heldOnGyroscope = 0.0
    /// Whether the floor steps aside while the field is disturbed: from the first sample judged undisturbed on (before
    /// it, the first samples give the only heading there is, disturbed or not), and after a recalibration at once.
    /// VQF keeps its floor through a disturbance; a magnet in the first `tauMag` seconds (30 s on land) then turned
    /// a still board's heading towards it at 2–3 °/s.
    private var floorWaitsForUndisturbed = false
    private var clocks = (gyroscope: Double?.none, accelerometer: Double?.none, magnetometer: Double?.none)
    /// The last gyroscope sample's rate, bias taken out (rad/s): it turns the 6D orientation to a field sample's
    /// own instant (`quaternion6D(turnedBy:)`).
    private var lastRate = Vector3.zero
    /// The longest interval between gyroscope samples that is no gap, s: a few samples lost at the 40–1000 Hz the
    /// filter is tuned for; a 10 Hz IMU's samples are no gap.
    public static let gapInterval = 0.1

    /// The longest gap in the gyroscope's samples (s) that is bridged (`updateGyroscope(_:dt:)`, the mean of the rates
    /// either side). Across a longer one the turn is not known (`orientationLost`): at 20 °/s, the fastest a car turns,
    /// 4 s is 80°, and a gap that holds a whole corner has a straight's rates either side. Measured on the simulated
    /// drives with samples lost every two minutes on average (`RoadDriveTests.testLongGapsInTheSamples`,
    /// `testSamplesLostNowAndThen`; RMS median, worst seed): bridged, 10 s gaps left the heading 5.96°, 12.45° with GNSS
    /// positions and 6.91°, 31.41° without; 30 s gaps 12.86°, 18.69° and 27.53°, 44.64°. 3 s gaps are better bridged
    /// (0.41° against 0.94° not bridged with positions, 3.09° against 5.39° without GNSS), 5 s gaps a trade: 0.59°, worst
    /// window 9.03° bridged against 0.83°, 2.75° not; without GNSS 4.96° (worst seed 21.92°) against 4.63° (7.26°).
    public static let longestBridge = 4.0
    /// How many times the orientation was lost across a gap (`longestBridge`): the 6D frame's heading after one is not
    /// the heading it had before the gap (a fusion that follows the field or the course in that frame starts again).
    public private(set) var orientationLosses = 0

    /// The gyroscope's samples stopped for longer than `longestBridge`: the turn across the gap is not known. Nothing is
    /// bridged (the 6D frame keeps the orientation it had); the heading starts again from the field as it did at the
    /// start: gains 1, ½, ⅓, … for `tauMag`, on the first samples whether disturbed or not (the field is the only
    /// heading there is), and its disturbance detector starts afresh with the reference it had. The tilt is left to the
    /// accelerometer at its time constant (a vehicle's tilt after a gap is near the one before it), and what the filter
    /// learnt of the gyroscope (its bias) stays.
    private mutating func orientationLost() {
        orientationLosses += 1
        watchTheFieldAfresh(reference: magnetic.reference)
        restartHeadingFromTheField(waitingForUndisturbed: false)
    }

    /// Disturbance detection starts afresh from `reference`, forgetting the field it learnt and the time the heading
    /// was held on the gyroscope (after a gap, or a new calibration).
    private mutating func watchTheFieldAfresh(reference: MagneticFieldReference?) {
        magnetic = MagneticDisturbanceDetector(parameters: parameters, reference: reference)
        heldOnGyroscope = 0
    }

    /// The heading takes the field's as at the start: gains 1, ½, ⅓, … (`headingGainFloor`) from the next field sample,
    /// or from the first judged undisturbed.
    private mutating func restartHeadingFromTheField(waitingForUndisturbed: Bool) {
        headingGainFloor = 1
        floorWaitsForUndisturbed = waitingForUndisturbed
    }

    /// The bias covariance's start, (0.01 °/s)².
    private var initialBiasVariance: Double { square(parameters.biasSigmaInit * 100) }

    /// A filter at the identity orientation with no bias estimate. `reference` (e.g. WMM's field at the
    /// position, in the magnetometer's units) lets disturbance detection work from the first sample instead
    /// of learning the field first.
    public init(parameters: AttitudeFilterParameters = AttitudeFilterParameters(), magneticReference reference: MagneticFieldReference? = nil) {
        self.parameters = parameters
        magnetometerTimeConstant = parameters.tauMag
        rest = RestDetector(parameters: parameters)
        magnetic = MagneticDisturbanceDetector(parameters: parameters)
        if let reference { magnetic.setReference(reference) }  // given at the start: the rejection time starts paid
        accLowPass = ButterworthLowPass(tau: parameters.tauAcc)
        rotationLowPass = ButterworthLowPass(tau: parameters.tauAcc)
        rotatedBiasLowPass = ButterworthLowPass(tau: parameters.tauAcc)
        biasCovariance = Matrix3x3.identity * square(parameters.biasSigmaInit * 100)
    }

    // MARK: Estimates

    /// Sensor → 6D earth frame (z up, heading not referenced to north).
    public var quaternion6D: Quaternion { inclinationCorrection * strapdown }

    /// The longest a field sample's instant may be from the last gyroscope sample's for the orientation to be turned
    /// to it at that sample's rate (seconds): farther, the gyroscope says nothing of that instant.
    public static let longestLead = 0.1

    /// `quaternion6D` `seconds` after the last gyroscope sample (before it when negative), at that sample's rate;
    /// as it is when `seconds` is 0 or longer than `longestLead`.
    public func quaternion6D(turnedBy seconds: Double) -> Quaternion {
        guard seconds != 0, abs(seconds) <= Self.longestLead else { return quaternion6D }
        return inclinationCorrection * (strapdown * Quaternion(rotationVector: lastRate * seconds)).normalized
    }

    /// Seconds from the last gyroscope sample to the instant a field sample stamped `time` (the clock of the
    /// timestamped updates) describes: `magDelay` before the stamp (never more than `longestLead`). Without
    /// `magDelay`, 0: VQF's way, the field judged in the orientation at hand (the last gyroscope sample's); so too
    /// before the first gyroscope sample. Worked out once per field sample where it is used twice (the fusion's
    /// online calibration and `updateMagnetometer(_:at:lead:)`).
    public func fieldLead(_ time: Double) -> Double {
        guard let delay = parameters.magDelay, let gyroscope = clocks.gyroscope, time.isFinite else { return 0 }
        return time - min(max(delay, 0), Self.longestLead) - gyroscope
    }

    /// Sensor → ENU with y magnetic north (9D); the same as `quaternion6D` until a magnetometer sample came.
    public var quaternion: Quaternion { headingRotation * quaternion6D }

    /// How fast the heading turns with the gyroscope's `rate` (rad/s, the filter's frame), bias taken out:
    /// rad/s clockwise seen from above. The vertical part of the rate in ENU, which the heading's own turn
    /// (`headingRotation`, about the vertical) leaves alone.
    @inlinable
    public func headingRate(_ rate: Vector3) -> Double { -quaternion6D.rotatedZ(rate - gyroBias) }

    /// One standard deviation of the bias estimate in its worst direction, rad/s (a bound from the
    /// covariance's largest row sum).
    public var gyroBiasUncertainty: Double {
        let p = biasCovariance
        let rowSum = max(abs(p.r0.x) + abs(p.r0.y) + abs(p.r0.z), abs(p.r1.x) + abs(p.r1.y) + abs(p.r1.z), abs(p.r2.x) + abs(p.r2.y) + abs(p.r2.z))
        return min(rowSum, initialBiasVariance).squareRoot() / 100 * .pi / 180
    }

    /// Takes `reference` as the undisturbed field from now on (e.g. when a GPS fix gives WMM's field).
    public mutating func setMagneticReference(_ reference: MagneticFieldReference) {
        magnetic.setReference(reference)
    }

    /// The magnetometer's calibration changed: disturbance detection starts afresh from `reference` (the
    /// undisturbed field, when known), forgetting the field, and the rejection time, it ran up through the old one.
    ///
    /// The heading then takes the newly calibrated field as it did the first field samples (gains 1, ½, ⅓, … for
    /// `tauMag` seconds: their mean), once the field is judged undisturbed, instead of turning to it at the filter's
    /// own rate: a 60° correction would otherwise take most of a minute (e^(−t/tauMag)). It does so only when the
    /// heading at hand is not already where the new field puts it: `fieldHeading` is that field's heading in this
    /// filter's 6D frame over the latest seconds and its spread about it (radians; online calibration follows the field
    /// in that frame: `OnlineMagnetometerCalibration.recentFieldHeading`). A heading within `headingRestartSpread`
    /// spreads of it (one the gyroscope held through a magnet, or that followed a field a refinement moves by a little)
    /// turns to the new field at the filter's own rate, as it turns to any field: the mean of a few seconds of field,
    /// whose errors last seconds in a turning hand, is a worse heading than it. Unknown (no gyroscope), it restarts.
    public mutating func magnetometerRecalibrated(reference: MagneticFieldReference?, fieldHeading: (mean: Double, spread: Double)? = nil) {
        watchTheFieldAfresh(reference: reference)
        if let fieldHeading, abs(Self.wrap(fieldHeading.mean - headingOffset)) <= Self.headingRestartSpread * fieldHeading.spread {
            return
        }
        restartHeadingFromTheField(waitingForUndisturbed: true)
    }

    /// How many of its own spreads the newly calibrated field's heading may lie from the heading at hand before the
    /// heading restarts from it (`magnetometerRecalibrated`). On BROAD through `bearing attitude` the changes logged (trial
    /// 29 and the magnets added to trials 05, 07 and 16) lay within 1.4 of them (the field's headings over 3 s spread by
    /// 2.4–12°), and restarting at every change took the mean heading error from 1.14° to 1.18° (1.16° at 1.5 spreads).
    /// A car's first calibration from a cold start lies 20–53° away at spreads of 1–2.5°.
    public static let headingRestartSpread = 3.0

    /// Whether a rest must agree with the bias already learnt: a vehicle (a car's steady bend, a boat's steady turn on flat
    /// water) whose turn at under 2 °/s on a quiet IMU passes the rest test (`RestDetector`) and would be taken for bias.
    /// Its rest is then taken only while the low-passed rate is within `restBiasAgreement` of the bias estimate, or within
    /// three times that estimate's uncertainty (at the start, before the first rest, it knows little and any rest is
    /// taken). A straight road on a quiet IMU still is one, rightly: the rate is then the bias.
    public var restMustMatchBias = false
    /// How far (rad/s) a vehicle's rest may depart from the bias learnt (0.3 °/s): a bias drifts by hundredths
    /// of a °/s a minute, a bend turns at tenths to a few.
    public static let restBiasAgreement = 0.3 * Double.pi / 180
    /// Whether the latest accelerometer sample's bias update took the rest detector's rest (`rest.atRest`, once a
    /// vehicle's check against the bias learnt, `restMustMatchBias`, passed it): the bias was then learnt from the rate.
    public private(set) var restTaken = false

    /// The heading's time constant towards the magnetometer in force (`parameters.tauMag` unless retuned).
    public private(set) var magnetometerTimeConstant: Double

    /// Retunes the heading's time constant towards the magnetometer (a land vehicle, whose gyroscope holds its
    /// heading through the street's field better than the field does).
    public mutating func retuneMagnetometer(tau: Double) {
        guard tau > 0, tau.isFinite else { return }
        magnetometerTimeConstant = tau
    }

    /// The accelerometer's time constant in force (`parameters.tauAcc` unless retuned).
    public var accelerometerTimeConstant: Double { accLowPass.tau }

    /// Takes the accelerometer (and the bias estimation that rests on it) at time constant `tau` from the next
    /// sample on, the low-passed state carried over: longer while the accelerometer reads an acceleration that
    /// nothing takes out (a car without GNSS speed), back to `parameters.tauAcc` when it is known again.
    public mutating func retuneAccelerometer(tau: Double) {
        guard tau > 0, tau.isFinite else { return }
        accLowPass.retune(tau: tau)
        rotationLowPass.retune(tau: tau)
        rotatedBiasLowPass.retune(tau: tau)
    }

    // MARK: Updates

    /// Gyroscope, accelerometer and magnetometer sampled together, `dt` seconds after the previous sample.
    public mutating func update(gyroscope: Vector3, accelerometer: Vector3, magnetometer: Vector3? = nil, dt: Double) {
        updateGyroscope(gyroscope, dt: dt)
        updateAccelerometer(accelerometer, dt: dt)
        if let magnetometer { updateMagnetometer(magnetometer, dt: dt) }
    }

    /// Strapdown integration: the bias-corrected rate (rad/s) held over the `dt` seconds since the previous
    /// gyroscope sample. Across a gap (`dt` over `gapInterval`: samples lost) the rate is taken as changing evenly from
    /// the sample before to this one, their mean (the trapezoidal rule): held from this sample alone, a second lost as
    /// a corner begins turns the heading by the whole corner's rate for that second, 10–20° on a road. Across a gap
    /// over `longestBridge` nothing is bridged (`orientationLost`).
    public mutating func updateGyroscope(_ rate: Vector3, dt: Double) {
        guard rate.isFinite, dt > 0, dt.isFinite else { return }
        hasGyroscope = true
        if parameters.restBiasEstimation || parameters.magneticDisturbanceRejection {
            rest.gyroscope(rate, dt: dt)
        }
        let before = lastRate
        lastRate = rate - gyroBias
        if dt > Self.longestBridge {
            orientationLost()
            return
        }
        let held = dt > Self.gapInterval ? (before + lastRate) * 0.5 : lastRate
        let step = Quaternion(rotationVector: held * dt)
        strapdown = (strapdown * step).normalized
    }

    /// Inclination correction and bias estimation from a specific-force sample (m/s², pointing up at rest),
    /// `dt` seconds after the previous accelerometer sample.
    public mutating func updateAccelerometer(_ acc: Vector3, dt: Double) {
        guard acc.isFinite, acc != .zero, dt > 0, dt.isFinite else { return }
        if parameters.restBiasEstimation { rest.accelerometer(acc, dt: dt) }

        // Low-pass in the almost-inertial frame, then into the 6D earth frame.
        let filtered = accLowPass.step(strapdown.rotate(acc), dt: dt)
        let inEarth = inclinationCorrection.rotate(filtered)
        let up = inEarth / max(inEarth.length, .leastNormalMagnitude)

        // The smallest rotation that takes `up` onto +z.
        let w = ((up.z + 1) / 2).squareRoot()
        let correction = w > 1e-6 ? Quaternion(w: w, x: 0.5 * up.y / w, y: -0.5 * up.x / w, z: 0) : Quaternion(w: 0, x: 1, y: 0, z: 0)
        inclinationCorrection = (correction * inclinationCorrection).normalized
        hasInclination = true

        // Across a gap too long to bridge the bias's low-passed rotations hold nothing of the orientation after it: they
        // start again, and this sample's correction (the turn across the gap, not the gyroscope's bias) teaches nothing.
        if dt > Self.longestBridge {
            rotationLowPass.reset()
            rotatedBiasLowPass.reset()
        } else if parameters.motionBiasEstimation || parameters.restBiasEstimation {
            estimateBias(correctionDirection: up, dt: dt)
        }
    }

    /// Heading correction from a field sample (any unit), `dt` seconds after the previous magnetometer sample and
    /// describing the field `lead` seconds after the last gyroscope sample: it is judged in the orientation of that
    /// instant (`quaternion6D(turnedBy:)`).
    public mutating func updateMagnetometer(_ field: Vector3, dt: Double, lead: Double = 0) {
        guard field.isFinite, field != .zero, dt > 0, dt.isFinite else { return }
        hasMagnetometer = true
        let inEarth = quaternion6D(turnedBy: lead).rotate(field)
        if parameters.magneticDisturbanceRejection {
            magnetic.observe(earthField: inEarth, turnRate: rest.lowPassedRate.length, dt: dt, gyroscope: hasGyroscope)
            if !magnetic.disturbed { floorWaitsForUndisturbed = true }
        }

        // δ̂ makes the horizontal field point along +y (magnetic north).
        let disagreement = Self.wrap(atan2(inEarth.x, inEarth.y) - headingOffset)
        var k = Self.gain(tau: magnetometerTimeConstant, dt: dt)
        if parameters.magneticDisturbanceRejection {
            k = magnetic.gain(k, dt: dt)
            heldOnGyroscope = magnetic.heldFor
        }
        if headingGainFloor != 0 && !(floorWaitsForUndisturbed && parameters.magneticDisturbanceRejection && magnetic.disturbed) {
            k = max(k, headingGainFloor)
            headingGainFloor = headingGainFloor / (headingGainFloor + 1)
            if headingGainFloor * magnetometerTimeConstant < dt { headingGainFloor = 0 }
        }
        headingOffset = Self.wrap(headingOffset + k * disagreement)
    }

    // MARK: Timestamped samples

    /// `updateGyroscope` for a sample taken at `time` (seconds, any origin, the same clock for all sensors).
    /// The first sample only starts this sensor's clock; a time that does not advance drops the sample.
    /// Returns whether the sample was used.
    @discardableResult
    public mutating func updateGyroscope(_ rate: Vector3, at time: Double) -> Bool {
        guard let dt = Self.interval(&clocks.gyroscope, time) else { return false }
        updateGyroscope(rate, dt: dt)
        return true
    }

    /// `updateAccelerometer` for a sample taken at `time`; see `updateGyroscope(_:at:)`.
    @discardableResult
    public mutating func updateAccelerometer(_ acc: Vector3, at time: Double) -> Bool {
        guard let dt = Self.interval(&clocks.accelerometer, time) else { return false }
        updateAccelerometer(acc, dt: dt)
        return true
    }

    /// `updateMagnetometer` for a sample stamped `time`, judged in the orientation of the instant it describes
    /// (`fieldLead(_:)`); see `updateGyroscope(_:at:)`.
    @discardableResult
    public mutating func updateMagnetometer(_ field: Vector3, at time: Double) -> Bool {
        updateMagnetometer(field, at: time, lead: fieldLead(time))
    }

    /// `updateMagnetometer(_:at:)` with the sample's `fieldLead(time)` worked out already.
    @discardableResult
    public mutating func updateMagnetometer(_ field: Vector3, at time: Double, lead: Double) -> Bool {
        guard let dt = Self.interval(&clocks.magnetometer, time) else { return false }
        updateMagnetometer(field, dt: dt, lead: lead)
        return true
    }

    private static func interval(_ last: inout Double?, _ time: Double) -> Double? {
        guard time.isFinite else { return nil }
        guard let previous = last else { last = time; return nil }
        guard time > previous else { return nil }
        last = time
        return time - previous
    }

    // MARK: Bias estimation

    /// One step of the bias Kalman filter (state b, covariance P in (0.01 °/s)²): P grows by the process
    /// noise, then, at rest, the low-passed rate measures b directly (R = I); in motion, the inclination
    /// correction's rate in the earth frame plus the low-passed R·b̂ measures R·b for the low-passed sensor →
    /// earth rotation R (x and y only; z is an artificial zero with a small weight).
    private mutating func estimateBias(correctionDirection up: Vector3, dt: Double) {
        let clip = parameters.biasClip * .pi / 180
        let p0 = initialBiasVariance
        let processNoise = square(0.1 * 100) * dt / parameters.biasForgettingTime

        let rotation = Matrix3x3(quaternion6D)
        let rotatedBias = rotation * gyroBias
        let smoothRotation = rotationLowPass.step(rotation, dt: dt)
        let smoothRotatedBias = rotatedBiasLowPass.step(Vector3(rotatedBias.x, rotatedBias.y, 0), dt: dt)

        let measurement: Matrix3x3
        var error: Vector3
        let noise: Vector3
        // The rest detector's rest, taken as one (`restMustMatchBias`). Inline: a getter on `self` here cost a copy of
        // the filter every sample (~220 instructions, `bench/compass-cost`).
        var atRest = parameters.restBiasEstimation && rest.atRest
        if atRest && restMustMatchBias {
            atRest = (rest.lowPassedRate - gyroBias).length <= max(Self.restBiasAgreement, 3 * gyroBiasUncertainty)
        }
        restTaken = atRest
        if atRest {
            error = rest.lowPassedRate - gyroBias
            measurement = .identity
            let w = Self.measurementNoise(sigma: parameters.biasSigmaRest, processNoise: processNoise)
            noise = Vector3(w, w, w)
        } else if parameters.motionBiasEstimation {
            let predicted = smoothRotation * gyroBias
            error = Vector3(-up.y / dt + smoothRotatedBias.x - predicted.x,
                            up.x / dt + smoothRotatedBias.y - predicted.y,
                            -predicted.z)
            measurement = smoothRotation
            let w = Self.measurementNoise(sigma: parameters.biasSigmaMotion, processNoise: processNoise)
            noise = Vector3(w, w, w / max(parameters.biasVerticalForgettingFactor, 1e-10))
        } else {
            measurement = .identity
            error = .zero
            noise = Vector3(-1, -1, -1)
        }

        if biasCovariance.r0.x < p0 { biasCovariance.r0.x += processNoise }
        if biasCovariance.r1.y < p0 { biasCovariance.r1.y += processNoise }
        if biasCovariance.r2.z < p0 { biasCovariance.r2.z += processNoise }
        guard noise.x >= 0 else { return }

        error = Vector3(Self.clip(error.x, clip), Self.clip(error.y, clip), Self.clip(error.z, clip))
        // K = P Rᵀ (W + R P Rᵀ)⁻¹; b += K e; P −= K R P.
        let pRt = biasCovariance * measurement.transposed
        guard let innovationInverse = (measurement * pRt + Matrix3x3.diagonal(noise)).inverse else { return }
        let gain = pRt * innovationInverse
        let update = gain * error
        gyroBias = Vector3(Self.clip(gyroBias.x + update.x, clip), Self.clip(gyroBias.y + update.y, clip), Self.clip(gyroBias.z + update.z, clip))
        biasCovariance = biasCovariance - gain * measurement * biasCovariance
    }

    /// The measurement noise variance that makes the covariance settle at σ² (σ in °/s) under the process
    /// noise V: the stationary point of P ← P + V, P ← P·W/(P + W) is P = σ² for W = σ⁴/V + σ².
    private static func measurementNoise(sigma: Double, processNoise v: Double) -> Double {
        let p = square(sigma * 100)
        return square(p) / v + p
    }

    // MARK: Helpers

    /// The first-order filter gain for time constant `tau` over `dt` (tau < 0: no update; 0: a jump).
    static func gain(tau: Double, dt: Double) -> Double {
        if tau < 0 { return 0 }
        if tau == 0 { return 1 }
        return 1 - exp(-dt / tau)
    }

    static func wrap(_ angle: Double) -> Double {
        var a = angle
        if a > .pi { a -= 2 * .pi } else if a < -.pi { a += 2 * .pi }
        return a
    }

    private static func clip(_ v: Double, _ limit: Double) -> Double { min(max(v, -limit), limit) }
}

@inline(__always) private func square(_ x: Double) -> Double { x * x }

/// A 3×3 matrix held inline (no array), for the filter's per-sample arithmetic.
struct Matrix3x3: LowPassSignal, Equatable {
    var r0: Vector3
    var r1: Vector3
    var r2: Vector3

    static let zero = Matrix3x3(r0: .zero, r1: .zero, r2: .zero)
    static let identity = Matrix3x3(r0: Vector3(1, 0, 0), r1: Vector3(0, 1, 0), r2: Vector3(0, 0, 1))

    static func diagonal(_ d: Vector3) -> Matrix3x3 {
        Matrix3x3(r0: Vector3(d.x, 0, 0), r1: Vector3(0, d.y, 0), r2: Vector3(0, 0, d.z))
    }

    init(r0: Vector3, r1: Vector3, r2: Vector3) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }

    /// The rotation matrix of a unit quaternion.
    init(_ q: Quaternion) {
        let (w, x, y, z) = (q.w, q.x, q.y, q.z)
        r0 = Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y))
        r1 = Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x))
        r2 = Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
    }

    var transposed: Matrix3x3 {
        Matrix3x3(r0: Vector3(r0.x, r1.x, r2.x), r1: Vector3(r0.y, r1.y, r2.y), r2: Vector3(r0.z, r1.z, r2.z))
    }

    static func + (a: Matrix3x3, b: Matrix3x3) -> Matrix3x3 { Matrix3x3(r0: a.r0 + b.r0, r1: a.r1 + b.r1, r2: a.r2 + b.r2) }
    static func - (a: Matrix3x3, b: Matrix3x3) -> Matrix3x3 { Matrix3x3(r0: a.r0 - b.r0, r1: a.r1 - b.r1, r2: a.r2 - b.r2) }
    static func * (a: Matrix3x3, s: Double) -> Matrix3x3 { Matrix3x3(r0: a.r0 * s, r1: a.r1 * s, r2: a.r2 * s) }
    static func * (a: Matrix3x3, v: Vector3) -> Vector3 { Vector3(a.r0.dot(v), a.r1.dot(v), a.r2.dot(v)) }

    static func * (a: Matrix3x3, b: Matrix3x3) -> Matrix3x3 {
        let t = b.transposed
        return Matrix3x3(r0: Vector3(a.r0.dot(t.r0), a.r0.dot(t.r1), a.r0.dot(t.r2)),
                         r1: Vector3(a.r1.dot(t.r0), a.r1.dot(t.r1), a.r1.dot(t.r2)),
                         r2: Vector3(a.r2.dot(t.r0), a.r2.dot(t.r1), a.r2.dot(t.r2)))
    }

    /// The inverse (adjugate over determinant), or nil when singular.
    var inverse: Matrix3x3? {
        let c0 = r1.cross(r2), c1 = r2.cross(r0), c2 = r0.cross(r1)
        let det = r0.dot(c0)
        guard abs(det) > .ulpOfOne, det.isFinite else { return nil }
        return Matrix3x3(r0: c0, r1: c1, r2: c2).transposed * (1 / det)
    }
}

extension AttitudeFilter {
    /// Runs the filter over a recording, in order, calling `each` with every sample's index and the
    /// orientation after it (`quaternion`: 9D with a magnetometer, else 6D). Each sample's interval is the
    /// time since the previous one; the first sample's is the second's (0.01 s for a single sample).
    public mutating func replay(_ samples: [IMUSample], _ each: (Int, Quaternion) throws -> Void) rethrows {
        for (i, s) in samples.enumerated() {
            update(gyroscope: s.gyroscope, accelerometer: s.accelerometer, magnetometer: s.magnetometer, dt: Self.replayInterval(samples, i))
            try each(i, quaternion)
        }
    }

    /// A recording's interval before sample `i`: the time since the previous one; the first sample's is the
    /// second's (0.01 s for a single sample).
    public static func replayInterval(_ samples: [IMUSample], _ i: Int) -> Double {
        if i > 0 { return samples[i].time - samples[i - 1].time }
        return samples.count > 1 ? samples[1].time - samples[0].time : 0.01
    }
}
