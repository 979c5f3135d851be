/// The tuning of `AttitudeFilter`, with the defaults published for VQF (D. Laidig, T. Seel, "VQF: Highly
/// accurate IMU orientation estimation with bias estimation and magnetic disturbance rejection", Information
/// Fusion 91 (2023) 187–204, arXiv:2203.17024, and its reference implementation, vqf 2.1.2). None depends on
/// the sampling rate. Angular rates are in °/s, angles in degrees, times in seconds, accelerations in m/s².
///
/// Decoding fills keys that are absent with these defaults, so a config may name only what it changes.
public struct AttitudeFilterParameters: Codable, Equatable, Sendable {
    /// Time constant of the accelerometer low-pass filter in the almost-inertial frame (a second-order
    /// Butterworth filter with cut-off √2/(2π·τ)). Smaller trusts the accelerometer more, larger the gyroscope.
    public var tauAcc: Double = 3
    /// Time constant of the first-order heading correction towards the magnetometer's heading. Smaller trusts
    /// the magnetometer more.
    public var tauMag: Double = 9

    /// Estimate the gyroscope bias while moving, from the inclination correction (not the magnetometer).
    public var motionBiasEstimation = true
    /// Detect rest, and estimate the gyroscope bias from the low-passed rate while at rest.
    public var restBiasEstimation = true
    /// Detect a disturbed magnetic field (norm or dip away from the reference) and stop or slow the heading
    /// correction while it lasts.
    public var magneticDisturbanceRejection = true

    /// Standard deviation of the initial bias uncertainty, °/s.
    public var biasSigmaInit = 0.5
    /// Time in which the bias uncertainty grows from 0 to 0.1 °/s without updates (the Kalman filter's
    /// process noise).
    public var biasForgettingTime = 100.0
    /// Largest bias expected, °/s: the bias estimate and each update's disagreement are clipped to it, and a
    /// larger steady rate is not taken for rest.
    public var biasClip = 2.0
    /// Standard deviation the bias uncertainty converges to during motion, °/s.
    public var biasSigmaMotion = 0.1
    /// Weight of an artificial zero measurement of the bias about the vertical during motion, where the
    /// inclination says nothing about it; it makes that component decay slowly to zero.
    public var biasVerticalForgettingFactor = 0.0001
    /// Standard deviation the bias uncertainty converges to at rest, °/s.
    public var biasSigmaRest = 0.03

    /// Time the gyroscope and accelerometer must stay near their low-passed values before rest is detected.
    public var restMinTime = 1.5
    /// Time constant of the second-order Butterworth low-pass filters giving the rest detector's references.
    public var restFilterTau = 0.5
    /// Time constant of the low-pass (the same filter, cut-off √2/(2π·τ): 4.5 Hz) each sample passes before its
    /// deviation from the reference is tested (≤ 0: none, each raw sample as VQF tests it). Not VQF's: a raw sample's
    /// vibration breaks the test as often as the IMU samples it, so a car idling at a light passed it 41 % of the time
    /// at 40 Hz and 4 % at 200 Hz (`RestDetectorTests`); through it, alike at any rate, while a hand's motion (1 Hz)
    /// still breaks it.
    public var restSampleTau = 0.05
    /// Rest threshold on |gyro − its low-passed value|, °/s.
    public var restThresholdGyro = 2.0
    /// Rest threshold on |acc − its low-passed value|, m/s².
    public var restThresholdAcc = 0.5

    /// Time constant of the fast low-pass filter on the current field norm and dip (≤ 0: none).
    public var magCurrentTau = 0.05
    /// Time constant with which the accepted field reference follows the undisturbed field.
    public var magRefTau = 20.0
    /// Disturbance threshold on the field norm, relative to the reference norm.
    public var magNormThreshold = 0.1
    /// Disturbance threshold on the dip angle, degrees.
    public var magDipThreshold = 10.0
    /// Time a different homogeneous field must persist (while turning, see `magNewMinGyro`) to be accepted
    /// as the new reference.
    public var magNewTime = 20.0
    /// The same, for the first reference when none is known yet; time at rest counts too (VQF's counts only time
    /// turning: see `MagneticDisturbanceDetector`).
    public var magNewFirstTime = 5.0
    /// Turn rate below which time does not count towards accepting a new field, °/s.
    public var magNewMinGyro = 20.0
    /// Time the field must stay within the thresholds to count as undisturbed again.
    public var magMinUndisturbedTime = 0.5
    /// Longest disturbance during which the heading correction is off altogether; after it, it runs
    /// `magRejectionFactor` times slower.
    public var magMaxRejectionTime = 60.0
    /// Slow-down of the heading correction in long disturbances; also how much faster undisturbed time pays
    /// back rejection time.
    public var magRejectionFactor = 2.0
    /// Seconds before its stamp that a field sample describes (`AttitudeFilter.fieldLead(_:)`): the sensor's own
    /// delay, where it is known. nil: VQF's way, the field judged in the orientation at hand (the last gyroscope
    /// sample's).
    public var magDelay: Double?

    public init() {}

    /// The defaults for an accelerometer without a gyroscope (LSM303): the same filter then is a
    /// tilt-compensated compass (as in Freescale AN4248, "Implementing a tilt-compensated eCompass using
    /// accelerometer and magnetometer sensors"), inclination from the low-passed specific force, heading
    /// from the field in that frame. With nothing to carry the attitude between corrections, both time
    /// constants are short (1 s: a heading that follows a turn within seconds, still averaging a boat's
    /// vibration), bias estimation is off, and a new field is accepted without turning (no rate to judge).
    public static var withoutGyroscope: AttitudeFilterParameters {
        var p = AttitudeFilterParameters()
        p.tauAcc = 1
        p.tauMag = 1
        p.motionBiasEstimation = false
        p.restBiasEstimation = false
        p.magNewMinGyro = 0
        return p
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = AttitudeFilterParameters()
        func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T { try c.decodeIfPresent(T.self, forKey: key) ?? fallback }
        tauAcc = try value(.tauAcc, d.tauAcc)
        tauMag = try value(.tauMag, d.tauMag)
        motionBiasEstimation = try value(.motionBiasEstimation, d.motionBiasEstimation)
        restBiasEstimation = try value(.restBiasEstimation, d.restBiasEstimation)
        magneticDisturbanceRejection = try value(.magneticDisturbanceRejection, d.magneticDisturbanceRejection)
        biasSigmaInit = try value(.biasSigmaInit, d.biasSigmaInit)
        biasForgettingTime = try value(.biasForgettingTime, d.biasForgettingTime)
        biasClip = try value(.biasClip, d.biasClip)
        biasSigmaMotion = try value(.biasSigmaMotion, d.biasSigmaMotion)
        biasVerticalForgettingFactor = try value(.biasVerticalForgettingFactor, d.biasVerticalForgettingFactor)
        biasSigmaRest = try value(.biasSigmaRest, d.biasSigmaRest)
        restMinTime = try value(.restMinTime, d.restMinTime)
        restFilterTau = try value(.restFilterTau, d.restFilterTau)
        restSampleTau = try value(.restSampleTau, d.restSampleTau)
        restThresholdGyro = try value(.restThresholdGyro, d.restThresholdGyro)
        restThresholdAcc = try value(.restThresholdAcc, d.restThresholdAcc)
        magCurrentTau = try value(.magCurrentTau, d.magCurrentTau)
        magRefTau = try value(.magRefTau, d.magRefTau)
        magNormThreshold = try value(.magNormThreshold, d.magNormThreshold)
        magDipThreshold = try value(.magDipThreshold, d.magDipThreshold)
        magNewTime = try value(.magNewTime, d.magNewTime)
        magNewFirstTime = try value(.magNewFirstTime, d.magNewFirstTime)
        magNewMinGyro = try value(.magNewMinGyro, d.magNewMinGyro)
        magMinUndisturbedTime = try value(.magMinUndisturbedTime, d.magMinUndisturbedTime)
        magMaxRejectionTime = try value(.magMaxRejectionTime, d.magMaxRejectionTime)
        magRejectionFactor = try value(.magRejectionFactor, d.magRejectionFactor)
        magDelay = try c.decodeIfPresent(Double.self, forKey: .magDelay)
    }

    /// The parameters that are out of range, e.g. `["tauAcc -1: must be > 0"]`; empty when all are usable.
    public var problems: [String] {
        var out: [String] = []
        func positive(_ name: String, _ v: Double) { if !(v > 0 && v.isFinite) { out.append("\(name) \(v): must be a positive number") } }
        func nonNegative(_ name: String, _ v: Double) { if !(v >= 0 && v.isFinite) { out.append("\(name) \(v): must be 0 or more") } }
        positive("tauAcc", tauAcc)
        nonNegative("tauMag", tauMag)
        positive("biasSigmaInit", biasSigmaInit)
        positive("biasForgettingTime", biasForgettingTime)
        positive("biasClip", biasClip)
        positive("biasSigmaMotion", biasSigmaMotion)
        nonNegative("biasVerticalForgettingFactor", biasVerticalForgettingFactor)
        positive("biasSigmaRest", biasSigmaRest)
        nonNegative("restMinTime", restMinTime)
        positive("restFilterTau", restFilterTau)
        if !restSampleTau.isFinite { out.append("restSampleTau \(restSampleTau): must be a number (≤ 0 tests each raw sample)") }
        positive("restThresholdGyro", restThresholdGyro)
        positive("restThresholdAcc", restThresholdAcc)
        if !magCurrentTau.isFinite { out.append("magCurrentTau \(magCurrentTau): must be a number (≤ 0 turns the filter off)") }
        positive("magRefTau", magRefTau)
        positive("magNormThreshold", magNormThreshold)
        positive("magDipThreshold", magDipThreshold)
        nonNegative("magNewTime", magNewTime)
        nonNegative("magNewFirstTime", magNewFirstTime)
        nonNegative("magNewMinGyro", magNewMinGyro)
        nonNegative("magMinUndisturbedTime", magMinUndisturbedTime)
        nonNegative("magMaxRejectionTime", magMaxRejectionTime)
        if !(magRejectionFactor >= 1 && magRejectionFactor.isFinite) { out.append("magRejectionFactor \(magRejectionFactor): must be 1 or more") }
        if let d = magDelay, !(d >= 0 && d <= AttitudeFilter.longestLead) {
            out.append("magDelay \(d): must be 0 to \(AttitudeFilter.longestLead) s")
        }
        return out
    }
}
