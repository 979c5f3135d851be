import BearingAttitude
import BearingCalibration
import BearingCompass
import BearingModel
import BearingPublishing
import OpenCombine

/// The compass path as pure stages, between the magnetometer's samples and the ATT chains: the
/// calibration in force, then mounting orientation, heading and declination. Each input that changes
/// (a calibration reloaded, a new declination) switches the stage to the new value; no stage reaches
/// outside its inputs.
public enum CompassStages {
    /// Declinations from fixes (WMM at each fix that moved), starting with `fallback` (WMM at the
    /// configured position) until the first fix; duplicates removed.
    public static func declinations(
        _ fixes: AnyPublisher<GPSFix, Never>, model: WorldMagneticModel, fallback: Declination?
    ) -> AnyPublisher<Declination?, Never> {
        fixes.scan(DeclinationState(fallback: fallback)) { $0.updated(with: $1, model: model) }
            .map(\.current)
            .prepend(fallback)
            .removeDuplicates()
            .eraseToAnyPublisher()
    }

    /// The local WMM field (declination, norm, dip) from fixes, starting with `fallback` until the first
    /// fix; duplicates removed. The fused path's counterpart of `declinations`.
    public static func localFields(
        _ fixes: AnyPublisher<GPSFix, Never>, model: WorldMagneticModel, fallback: LocalField?
    ) -> AnyPublisher<LocalField?, Never> {
        fixes.scan(DeclinationState(fallback: fallback?.declination, reference: fallback?.reference)) { $0.updated(with: $1, model: model) }
            .map(\.field)
            .prepend(fallback)
            .removeDuplicates()
            .eraseToAnyPublisher()
    }

    /// Attitudes from an accelerometer + gyroscope and a magnetometer: every input enters one
    /// `AttitudeFusion` in arrival order (on the pipeline queue), each sample fed to the filter at its own
    /// time, and each inertial sample (once a field sample has come) gives an `Attitude`: at the gyroscope's
    /// rate, for the ATT chains to throttle, with its rate of turn (`RateOfTurn`). The calibrations and the mounting level in force switch the
    /// stage to the new value when they change.
    public static func fusedAttitudes(
        inertial: AnyPublisher<InertialSample, Never>,
        magnetic: AnyPublisher<MagneticSample, Never>,
        calibrations: AnyPublisher<ActiveCalibration?, Never>,
        accelerometerCalibrations: AnyPublisher<ActiveCalibration?, Never> = Just(nil).eraseToAnyPublisher(),
        levels: AnyPublisher<MountingLevel?, Never> = Just(nil).eraseToAnyPublisher(),
        localFields: AnyPublisher<LocalField?, Never>,
        fixes: AnyPublisher<GPSFix, Never> = Empty().eraseToAnyPublisher(),
        deviations: AnyPublisher<DeviationCurve?, Never> = Just(nil).eraseToAnyPublisher(),
        drivingDeviations: AnyPublisher<DrivingDeviationRecord?, Never> = Just(nil).eraseToAnyPublisher(),
        fusion: AttitudeFusion
    ) -> AnyPublisher<Attitude, Never> {
        // OpenCombine has no Merge: a flatMap over the inputs merges them, subscribing in this order (so the
        // calibrations, level, deviation and field in force, and the deviation from driving kept, come before the
        // first sample).
        Publishers.Sequence<[AnyPublisher<FusionInput, Never>], Never>(sequence: [
            calibrations.map(FusionInput.calibration).eraseToAnyPublisher(),
            accelerometerCalibrations.map(FusionInput.accelerometerCalibration).eraseToAnyPublisher(),
            levels.map(FusionInput.level).eraseToAnyPublisher(),
            deviations.map(FusionInput.deviation).eraseToAnyPublisher(),
            localFields.map(FusionInput.localField).eraseToAnyPublisher(),
            drivingDeviations.map(FusionInput.drivingDeviation).eraseToAnyPublisher(),
            fixes.map(FusionInput.fix).eraseToAnyPublisher(),
            magnetic.map(FusionInput.magnetic).eraseToAnyPublisher(),
            inertial.map(FusionInput.inertial).eraseToAnyPublisher(),
        ])
        .flatMap { $0 }
        .scanInPlace(fusion) { (state: inout AttitudeFusion, input) in
            state.step(input)
            return state.emitted
        }
        .scanInPlace(RateOfTurn()) { $0.add($1) }
        .eraseToAnyPublisher()
    }

    /// Attitudes from raw samples: each sample corrected by the calibration in force when it arrives
    /// (only if fitted for the sample's chip), turned into board axes, with the declination in force and
    /// the rate of turn (`RateOfTurn`: the heading's slope).
    public static func attitudes(
        _ samples: AnyPublisher<MagneticSample, Never>,
        calibrations: AnyPublisher<ActiveCalibration?, Never>,
        declinations: AnyPublisher<Declination?, Never>,
        orientation: Orientation
    ) -> AnyPublisher<Attitude, Never> {
        declinations.map { declination in
            calibrations.map { calibration in
                samples.map { sample in
                    let correction = calibration.flatMap { $0.chip == sample.chip ? $0.correction : nil } ?? .identity
                    return Compass.attitude(sample, orientation: orientation, calibration: correction,
                                            declination: declination.map { ($0.value, $0.source) })
                }
            }
            .switchToLatest()
        }
        .switchToLatest()
        .scanInPlace(RateOfTurn()) { $0.add($1) }
        .eraseToAnyPublisher()
    }
}
