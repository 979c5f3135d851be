import BearingAttitude
import BearingCalibration
import BearingOnlineCalibration
import BearingModel

// The compass path as pure stages, between the sensors' samples and the ATT chains. Each is a value that
// takes its inputs one at a time, in the order they reach the pipeline queue, and gives what they produce:
// no queue, no thread, no publisher. The daemon (`Agent`) feeds them from the hub's sources; a test or a
// benchmark feeds them directly, and gets what the daemon gets.

/// The WMM at the fix, as it changes: declination alone (`declinations`) or the whole local field
/// (`localFields`), starting with the fallback (WMM at the configured position) until the first fix. A fix is
/// taken into a `DeclinationState` (recomputed once the position moves about 1 km); `take` says whether
/// the value read from it changed, and only a change is passed on.
public struct WMMStage<Value: Equatable>: Sendable where Value: Sendable {
    private var state: DeclinationState
    private let read: @Sendable (DeclinationState) -> Value
    public let model: WorldMagneticModel
    /// The value in force: the fallback until a fix changes it.
    public private(set) var current: Value

    private init(model: WorldMagneticModel, state: DeclinationState, initial: Value, read: @escaping @Sendable (DeclinationState) -> Value) {
        self.model = model
        self.state = state
        self.read = read
        current = initial
    }

    /// What the last fix taken changed of the positions believed (`PositionJumps`), for the journal.
    public var jumpEvent: PositionJumps.Event? { state.jumpEvent }
    /// Whether the last fix taken had a position that was not believed (`DeclinationState.heldLast`).
    public var heldLast: Bool { state.heldLast }

    /// Takes a fix; true when the value in force changed (then read `current`).
    public mutating func take(_ fix: GPSFix) -> Bool {
        state = state.updated(with: fix, model: model)
        let value = read(state)
        guard value != current else { return false }
        current = value
        return true
    }
}

extension WMMStage where Value == Declination? {
    /// Declinations, for the magnetometer-only compass.
    public static func declinations(model: WorldMagneticModel, fallback: Declination?) -> Self {
        WMMStage(model: model, state: DeclinationState(fallback: fallback), initial: fallback) { $0.current }
    }
}

extension WMMStage where Value == LocalField? {
    /// Declination, norm and dip, for the fused compass.
    public static func localFields(model: WorldMagneticModel, fallback: LocalField?) -> Self {
        WMMStage(model: model, state: DeclinationState(fallback: fallback?.declination, reference: fallback?.reference), initial: fallback) { $0.field }
    }
}

/// The magnetometer alone: each sample corrected by the calibration in force when it arrives (only if
/// fitted for the sample's chip), turned into board axes, with the declination in force and the rate of
/// turn (`RateOfTurn`: the heading's slope).
public struct MagnetometerStage: Sendable {
    public let orientation: Orientation
    /// The calibration in force from the next sample on (nil: none).
    public var calibration: ActiveCalibration?
    /// The declination in force from the next sample on (nil: magnetic north).
    public var declination: Declination?
    private var rate = RateOfTurn()

    public init(orientation: Orientation, calibration: ActiveCalibration? = nil, declination: Declination? = nil) {
        self.orientation = orientation
        self.calibration = calibration
        self.declination = declination
    }

    public mutating func attitude(_ sample: MagneticSample) -> Attitude {
        let correction = calibration.flatMap { $0.chip == sample.chip ? $0.correction : nil } ?? .identity
        return rate.add(Compass.attitude(sample, orientation: orientation, calibration: correction,
                                         declination: declination.map { ($0.value, $0.source) }))
    }
}

/// Magnetometer and accelerometer + gyroscope: every input enters one `AttitudeFusion`, each sample fed to
/// the filter at its own time, and each inertial sample (once a field sample has come) gives an `Attitude`,
/// at the gyroscope's rate, with its rate of turn (`RateOfTurn`). Calibrations, the mounting level, the
/// field, deviations and fixes are inputs like the samples: each is in force from when it arrives.
public struct FusionStage: Sendable {
    public private(set) var fusion: AttitudeFusion
    private var rate = RateOfTurn()

    public init(_ fusion: AttitudeFusion) { self.fusion = fusion }

    /// One input; the attitude it gives (an inertial sample's), or nil. `elapsed`: a sample's time on the pipeline's
    /// monotonic clock (`AttitudeFusion.step(_:elapsed:)`).
    public mutating func step(_ input: FusionInput, elapsed: Double? = nil) -> Attitude? {
        fusion.step(input, elapsed: elapsed)
        guard let a = fusion.emitted else { return nil }
        return rate.add(a)
    }

    /// A fix, as the daemon takes it: first the WMM field at it, when the fix has moved it (`field`), then, on
    /// land (`learnsFromDriving`), the fix itself, unless its position was not believed (a jump held, 0°, 0°): its
    /// course and speed are no more to be believed than its position (a receiver's glitch; a spoofer gives both). A
    /// car's fixes 2,200 km away for 10 s with a course 30° off were taken as a deviation of 30°
    /// (`AttitudeFusionTests.testAFixHeldAsAJumpTeachesTheCarNothing`). Returns whether the field in force changed.
    @discardableResult
    public mutating func take(_ fix: GPSFix, field: inout WMMStage<LocalField?>, learnsFromDriving: Bool) -> Bool {
        let moved = field.take(fix)
        if moved { _ = step(.localField(field.current)) }
        if learnsFromDriving && !field.heldLast { _ = step(.fix(fix)) }
        return moved
    }

    /// What a run starts with, in this order: the calibrations, the level, the deviation and the field in force,
    /// and the deviation from driving kept (each one that is not nil or not given is still an input: nil is
    /// "none in force").
    public mutating func start(calibration: ActiveCalibration?, accelerometerCalibration: ActiveCalibration? = nil,
                               level: MountingLevel? = nil, deviation: DeviationCurve? = nil, localField: LocalField?,
                               drivingDeviation: DrivingDeviationRecord? = nil) {
        for input: FusionInput in [.calibration(calibration), .accelerometerCalibration(accelerometerCalibration), .level(level),
                                   .deviation(deviation), .localField(localField), .drivingDeviation(drivingDeviation)] {
            _ = step(input)
        }
    }
}
