import BearingAttitude
import BearingCalibration
import BearingModel

/// The attitude filter fed through online magnetometer calibration: each field sample is learnt (with the
/// filter's "up"), corrected by the calibration in force, then fused; a fit runs when one is due, and an
/// accepted one re-seeds the filter's disturbance reference with the new field. The bare loop of the two, without the
/// fusion stage's frames, land rules or course (`BROADTrialTests.testOnlineCalibrationFromAColdStart` compares it with
/// the filter alone); `bearing attitude --samples` and the daemon run `AttitudeFusion`.
public struct OnlineCalibratedFilter: Sendable {
    public private(set) var filter: AttitudeFilter
    /// nil: calibration off (the samples are fused as they come).
    public private(set) var calibration: OnlineMagnetometerCalibration?
    /// Each fit's outcome with its time, oldest first (taken by `takeOutcomes`).
    public private(set) var outcomes: [(time: Double, outcome: OnlineMagnetometerCalibration.Outcome)] = []

    /// Whether the samples carry a gyroscope's rates (else the filter is a tilt-compensated compass).
    public let hasGyroscope: Bool

    public init(filter: AttitudeFilter, calibration: OnlineMagnetometerCalibration?, hasGyroscope: Bool = true) {
        self.filter = filter
        self.calibration = calibration
        self.hasGyroscope = hasGyroscope
    }

    /// One sample `dt` seconds after the previous, at `time` seconds.
    public mutating func update(_ s: IMUSample, dt: Double) {
        guard let raw = s.magnetometer, var calibration else {
            filter.update(gyroscope: s.gyroscope, accelerometer: s.accelerometer, magnetometer: s.magnetometer, dt: dt)
            return
        }
        let toIMU = filter.quaternion6D.conjugate
        let up = toIMU.rotate(Vector3(0, 0, 1))
        // Without a gyroscope the 6D orientation has no heading of its own to bin a turn by.
        let east = hasGyroscope ? toIMU.rotate(Vector3(1, 0, 0)) : nil
        if let change = calibration.add(raw, up: up.isFinite ? up : nil, east: east, time: s.time) {
            adopt(change, from: calibration)
            outcomes.append((s.time, .accepted(change)))
        }
        if let judgement = calibration.takeJudgement() { outcomes.append((s.time, judgement)) }
        filter.update(gyroscope: s.gyroscope, accelerometer: s.accelerometer, magnetometer: calibration.inForce.apply(raw), dt: dt)
        if calibration.fitDue(at: s.time) {
            let outcome = calibration.fit(at: s.time)
            if case .accepted(let change) = outcome { adopt(change, from: calibration) }
            outcomes.append((s.time, outcome))
        }
        self.calibration = calibration
    }

    /// A GNSS epoch of a land vehicle going straight at speed, for a course-aided start
    /// (`OnlineMagnetometerCalibration.course`): the sensor's x is the vehicle's forward axis.
    public mutating func course(_ track: Double, declination: Double, time: Double) {
        guard var calibration, hasGyroscope else { return }
        let up = filter.quaternion6D.conjugate.rotate(Vector3(0, 0, 1))
        if let change = calibration.course(track, declination: declination, up: up, forward: Vector3(1, 0, 0), time: time) {
            adopt(change, from: calibration)
            outcomes.append((time, .accepted(change)))
        }
        self.calibration = calibration
    }

    private mutating func adopt(_ change: CalibrationChange, from online: OnlineMagnetometerCalibration) {
        filter.adopt(change, field: online.field, local: nil, online: online)
    }

    /// Runs every sample, calling `each` with its index and the orientation after it.
    public mutating func replay(_ samples: [IMUSample], _ each: (Int, Quaternion) throws -> Void) rethrows {
        for i in samples.indices {
            update(samples[i], dt: AttitudeFilter.replayInterval(samples, i))
            try each(i, filter.quaternion)
        }
    }

    /// The fit outcomes so far, emptied.
    public mutating func takeOutcomes() -> [(time: Double, outcome: OnlineMagnetometerCalibration.Outcome)] {
        defer { outcomes = [] }
        return outcomes
    }
}

extension AttitudeFilter {
    /// Puts a calibration change in force. Disturbances are judged against the local field's reference
    /// (`local`, WMM's at the fix) when there is one, else against the fit's own field (`field`, with the
    /// fit's dip). After a change that turns the heading more than a refinement would, the disturbance
    /// detection starts afresh, and the heading restarts from the new field unless it is already where the latest
    /// `Self.fieldHeadingSeconds` of samples that `online` followed put it under the new calibration
    /// (`magnetometerRecalibrated`). The daemon's fusion stage and `OnlineCalibratedFilter` both adopt through it.
    public mutating func adopt(_ change: CalibrationChange, field: Double?, local: MagneticFieldReference?,
                               online: OnlineMagnetometerCalibration?) {
        let reference = MagneticFieldReference.read(local: local, scaledTo: field) ?? field.map { MagneticFieldReference(norm: $0, dip: change.after.meanDip) }
        if change.turnsTheHeading {
            let heading = online?.recentFieldHeading(under: change.calibration, seconds: Self.fieldHeadingSeconds)
            magnetometerRecalibrated(reference: reference, fieldHeading: heading)
        } else if local == nil, let reference {
            setMagneticReference(reference)
        }
    }

    /// Seconds of field, followed in the gyroscope's frame, that a calibration change's heading is judged on (`adopt`):
    /// short enough that the gyroscope's drift over them is nothing, long enough to show the field's own spread.
    public static let fieldHeadingSeconds = 3.0
}

extension MagneticFieldReference {
    /// The undisturbed field as a calibration makes the magnetometer read it: the local field's dip (`local`, WMM's at
    /// the fix) at the magnitude the calibration scales the field to (`field`: online calibration's, or its file's),
    /// else at the local field's. A calibration learnt before the first fix scales to the fitted radius, and a chip's
    /// gain may be off: judged by WMM's magnitude, such a field 15 % off was disturbed for good
    /// (`AttitudeFusionTests.testAKeptCalibrationsFieldIsTheMagnitudeOnlineCalibrationJudgesBy`). nil without `local`.
    public static func read(local: MagneticFieldReference?, scaledTo field: Double?) -> MagneticFieldReference? {
        local.map { MagneticFieldReference(norm: field.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? $0.norm, dip: $0.dip) }
    }
}
