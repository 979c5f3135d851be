import BearingCalibration
import BearingOnlineCalibration
import BearingAttitude
import BearingModel
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What enters the fusion stage, in the order it reaches the pipeline queue.
public enum FusionInput: Sendable {
    case inertial(InertialSample)
    case magnetic(MagneticSample)
    /// The calibration in force from now on (nil: none).
    case calibration(ActiveCalibration?)
    /// The accelerometer calibration in force from now on (nil: none).
    case accelerometerCalibration(ActiveCalibration?)
    /// The mounting level in force from now on (nil: none).
    case level(MountingLevel?)
    /// The WMM field where the board is (nil: no fix and no fallback position).
    case localField(LocalField?)
    /// gpsd's fix: on land (`vehicle`), its course at speed teaches the deviation.
    case fix(GPSFix)
    /// The deviation curve in force from now on (`bearing swing`'s; nil: none).
    case deviation(DeviationCurve?)
    /// The deviation learnt from driving in an earlier run (`calibration.driving_file`; nil: none).
    case drivingDeviation(DrivingDeviationRecord?)
    /// Online calibration learns (`track`) or holds what it has (`locked`) from now on: a client's action.
    /// Ignored when online calibration is off.
    case onlineMode(AutoCalibrationMode, at: GPSTimestamp)
    /// Online calibration forgets what it learnt: the file's calibration (or none) again, learning from the start.
    case onlineReset(at: GPSTimestamp)
}

/// One event of online calibration, for its history: a fit accepted (or a step's, a recall's, the course's),
/// a fit refused because it did not explain the field better, or because the course on the straights did not bear
/// it out, or a client's action.
public struct OnlineCalibrationEvent: Equatable, Sendable {
    public enum Kind: String, Sendable {
        case accepted, refused, recalled, step, course, lock, unlock, reset, scaled
        case refusedByCourse = "refused_by_course"
    }
    public var time: GPSTimestamp
    public var kind: Kind
    /// The misfit (norm % plus dip spread °) of the calibration in force before, and of the fit after (accepted
    /// or refused); nil for an action.
    public var before: Double?
    public var after: Double?
    public var regions: Int
}

/// The fused compass as a value: an `AttitudeFilter` fed with each sensor's samples at their own times,
/// in the board frame (x forward, y right, z down), and the `Attitude` the latest input produced.
///
/// Magnetometer samples are corrected by the calibration in force (only if fitted for their chip) and
/// turned into the board frame by the magnetometer's orientation; accelerometer samples likewise by the
/// accelerometer calibration and the IMU's orientation, gyroscope samples by the IMU's orientation. Then
/// all three are turned by the mounting level in force into the levelled frame, so roll, pitch, heading
/// and the ATT vectors are those of the vehicle, not of a board mounted slightly off level; a new level
/// restarts the filter, whose state belongs to the old frame. The WMM
/// field's norm and dip become the filter's disturbance reference only while a calibration is in force:
/// an uncalibrated field (hard iron of tens of µT) would count as disturbed for good, so until then the
/// filter learns the reference from the field itself.
///
/// Inertial samples without an angular rate (an accelerometer with no gyroscope) switch the filter to
/// `parametersWithoutGyroscope`, a tilt-compensated compass; samples with one switch it back.
public struct AttitudeFusion: Sendable {
    public private(set) var filter: AttitudeFilter
    /// A land vehicle's accelerometer time constant (s) while no GNSS speed takes its own acceleration out and it
    /// moves like one (`carLikeTiltRate`). Its "up" then rides on the gyroscope through braking and pulling away
    /// (seconds each at 2–3 m/s²: 12–17° of tilt, most of which a 3 s low-pass lets through) and the accelerometer
    /// takes out only the gyroscope's drift; a hill's grade, which the gyroscope sees as a turn in pitch, is kept.
    /// The "acceleration rejection" of automotive and fixed-wing AHRS without a speed reference, as a time constant.
    /// On the simulated drives without GNSS (RoadDriveTests), 15, 30, 60 and 120 s gave medians of 9.7, 10.2, 8.5
    /// and 8.4° against 12.5° at 3 s.
    public static let tauAccWithoutSpeed = 60.0
    /// A land vehicle's accelerometer time constant (s) while GNSS speed takes its own acceleration out and it moves
    /// like one (`carLikeTiltRate`). The speed's change is the mean of the second between the last two epochs, and
    /// reaches the samples a moment after the later one (`VehicleAcceleration.acceleration`): what the car's
    /// acceleration did since (pulling away, braking, metres a second per second within the second) is left in the
    /// force, and the filter's own 3 s let it tilt "up". Here the gyroscope carries the tilt through it, and the
    /// accelerometer still takes out its drift. On the simulated drives (`RoadDriveTests`, seeds 1–8, 2026-12-05), ATT's
    /// pitch RMS off the car's, median, every effect off (a flat road, the car sensed exactly) | every effect on: own 3 s
    /// 1.01° | 2.39°; 10 s 0.34° | 1.87°; **20 s** 0.18° | 1.79°; 60 s 0.09° | 1.90° (roll 0.37° → 0.18° off, 1.79° →
    /// 1.75° on); the heading the same at each (0.50° median with GNSS).
    public static let tauAccWithSpeed = 20.0
    /// The largest rate of tilt (roll and pitch rates, low-passed over `tiltRateTime` s, °/s) at which a land vehicle
    /// without GNSS speed takes `tauAccWithoutSpeed`: a car's is below 2 °/s; a board turned in the hand (the BROAD
    /// trials through `bearing attitude`'s default `car`) is well above, and keeps the filter's own.
    public static let carLikeTiltRate = 5.0
    /// A land vehicle's heading time constant towards the magnetometer (s) while it moves like one
    /// (`carLikeTiltRate`): its gyroscope holds the heading through the street's field, which bends the field's
    /// direction for seconds at a time, and through its own loads switching, which bend it for minutes until a
    /// step or a fit takes them in, better than the field does. What it costs is the gyroscope's bias left after
    /// the rests (the heading lags by bias × τ: 0.005 °/s learnt is 0.3°) and its scale error in a corner (3 % of
    /// 90° is 2.7°, taken out over τ). With GNSS the course carries the heading on the straights and τ moves
    /// nothing. Without GNSS, after ten minutes on the simulated drives (RoadDriveTests, 2026-12-04), median of
    /// seeds 1–48 (mean; the eight; seeds 9–24): 30 s 3.90° (4.10°; 3.13°; 3.86°), 45 s 3.62° (3.90°; 2.82°;
    /// 3.70°), **60 s** 3.57° (3.76°; 2.62°; 3.71°), 90 s 3.41° (3.63°; 2.43°; 3.93°), 120 s 3.30° (3.58°;
    /// 2.40°; 4.03°). Beyond 60 s the sixteen seeds no change was tuned on get worse, and a real gyroscope's bias
    /// (temperature) is likely worse than the simulator's: 60 s, where every set gains.
    public static let tauMagOnLand = 60.0
    /// `tauMagOnLand` while no rest has measured the gyroscope's bias for `biasStaleTime`: a gyroscope warming in a car
    /// that does not stop (a motorway, whose shaking passes no rest test) drifts by hundredths of a °/s a minute, which
    /// nothing else catches about the vertical, and the heading lags by bias × τ: 0.1 °/s cost 6.00° at 60 s, 3.00°
    /// at 30 s (`AttitudeFusionTests.testAGyroscopeWarmingOnAMotorwayHasTheFieldTakeItsHeadingSooner`).
    public static let tauMagOnLandBiasStale = 30.0
    /// Seconds after the filter's bias update last took a rest (`AttitudeFilter.restTaken`) that its bias is taken
    /// as measured. On the simulated drives a car stops at least this often: 300 s gave the same figures as no limit,
    /// 120 s cost them 0.04–0.11° (RoadDriveTests without GNSS, 2026-12-04).
    public static let biasStaleTime = 300.0
    /// Seconds over which the tilt rate is low-passed (a bump's spike is not a hand's turn).
    public static let tiltRateTime = 5.0
    /// The gyroscope's rate about the horizontal (roll and pitch rates), low-passed over `tiltRateTime`, °/s.
    private var tiltRate = 0.0
    /// When the filter's bias update last took a rest (`AttitudeFilter.restTaken`), s; nil since the filter started.
    private var lastRest: Double?
    public let parameters: AttitudeFilterParameters
    public let parametersWithoutGyroscope: AttitudeFilterParameters
    public let imuOrientation: Orientation
    public let magnetometerOrientation: Orientation
    /// Refer `heading` and `quaternion` to true north when the WMM declination is known.
    public let trueNorth: Bool
    /// The attitude the last input gave: one per inertial sample once a field sample has been used.
    public private(set) var emitted: Attitude?
    /// The mounting level in force; nil takes the board frame as level.
    public private(set) var level: MountingLevel?
    /// Online magnetometer calibration (`calibration.auto`): off, learning (`track`) or holding what it
    /// learnt (`locked`). The calibration in force (manual, or learnt and kept) is its baseline.
    public private(set) var auto: AutoCalibrationMode
    /// Online calibration's latest events, oldest first (at most `historyLength`).
    public private(set) var history: [OnlineCalibrationEvent] = []
    /// The calibration in force scaled to the first fix's field (`expectLocalField`), not yet adopted.
    private var scaledAtTheFix: CalibrationChange?
    /// The sample time of the online calibration's latest change (nil: none since it was started, `startOnline`).
    private var lastChange: GPSTimestamp?
    public static let historyLength = 20
    /// How online calibration learns: `OnlineCalibrationSettings.forLand` in a car or rover.
    public let onlineSettings: OnlineCalibrationSettings
    /// The online calibration (nil when `auto` is off): it corrects the field samples instead of the file's.
    public private(set) var online: OnlineMagnetometerCalibration?
    /// The deviation learnt from driving (`vehicle` car or rover; nil otherwise): it corrects the headings.
    public private(set) var driving: PassiveDeviation?
    /// On land, the course going straight at speed as a heading reference (`CourseTrim`; used only when
    /// `tracksCourse`: a plain value, not an optional, so that the per-sample path never copies it).
    public private(set) var courseTrim = CourseTrim()
    /// The gyroscope's bias at the last fix's epoch given to `courseTrim` (`CourseTrim.gyroscopeDriftChanged`).
    private var trimBias: Vector3?
    public let tracksCourse: Bool
    /// Whether `courseTrim` has learnt anything (the per-sample path reads this flag alone).
    private var trimLearnt = false
    /// `driving`'s table, taken each time it may change (a fix, a restart): the per-sample lookup reads it alone.
    private var drivingTable: DeviationTable?
    /// The latest deviation from driving kept (read at start, or written since): put back whenever the
    /// calibration it was seen after is in force again.
    private var keptDriving: DrivingDeviationRecord?
    /// `keptDriving`'s forward axis, checked once when it is set (nil when it has none, or a bad one).
    private var keptForward: Vector3?
    /// When `driving` was last kept (its fix time) and how many sectors held observations then.
    private var drivingKeptAt: (time: Double, sectors: Int)?
    /// Seconds between keeping the deviation from driving while it learns (a new sector is kept at once).
    public var drivingKeepInterval = 600.0
    /// Degrees the forward axis learnt must move from the one kept to be kept again at once.
    static let forwardKeepAngle = 2.0
    /// On land, the vehicle's forward axis (unit, in the board's levelled axes) that every heading is taken along, once
    /// the axis is known and only where it is more than `mountingThreshold` degrees from the board's x: a board turned
    /// in the vehicle, or standing in it (on its end against a windscreen, its x straight up, whose own heading is
    /// none); nil otherwise, the board's x. Before it is known, a board whose x is within `steepAxis` of the vertical
    /// has its headings taken along its axis nearest the horizontal. The compass's and the gyroscope's headings alike
    /// are the vehicle's (`AttitudeAngles.heading(_:along:)`), so the deviation from driving and the course's trim work
    /// on the vehicle's compass heading, and where the trim fades (a GNSS outage) it fades to the vehicle's heading.
    /// The difference from the board's x heading is part of the deviation the headings include. An axis nearer x is
    /// left to the deviation and the trim: they are exact on the straights, the axis's fit only to a few degrees (the
    /// GNSS lag, sideslip), and a deviation holds ±45°. Without GNSS there is neither, and the axis the corners give
    /// (`VehicleAcceleration.forwardFromCornersAlone`) is taken however near x it lies: on the simulated drives it left
    /// 0.80° of the board's yaw on the car in the heading (median of eight), where x left 1.12°, and the heading after
    /// ten minutes went from 3.78° to 2.95° (median; 4.11° to 3.68° on 24 drives).
    public private(set) var mountingAxis: Vector3?
    /// `mountingAxis`'s yaw from the board's x (degrees, clockwise from it, in the board's x–y plane): how far a board
    /// about level is turned in the vehicle; 0 without an axis.
    public var mountingYaw: Double { mountingAxis.map { atan2($0.y, $0.x) * 180 / .pi } ?? 0 }
    /// On land, the vehicle's "up" in the board's levelled axes: the mean of the board's up at the fixes taken at speed
    /// (at least `vehicleUpSpeed`), a running mean over the first `vehicleUpEpochs` and an exponential one over as many
    /// after (about ten minutes at 1 Hz: roads are level on average, a hill's grade is not). With `mountingAxis` it
    /// makes the vehicle's axes, whose pitch and roll ATT gives in place of the board's (a board across the car
    /// would read the car's pitch as its roll; one standing, 60–90° of pitch); so it does with the board's x for a board
    /// upside down (this "up" on the board's z side, not −z), whose own roll would read 180°.
    public private(set) var vehicleUp: Vector3?
    private var vehicleUpWeight = 0.0
    /// The speed (m/s) at or above which a fix's "up" is the vehicle's on the move.
    static let vehicleUpSpeed = 5.0
    /// The epochs the vehicle's "up" is the mean of.
    static let vehicleUpEpochs = 600.0
    /// The epochs a kept "up" counts for: a minute at speed refines it halfway, so a board since moved is found again.
    static let keptUpEpochs = 60.0
    /// Degrees from the board's x beyond which the forward axis is taken, unless it is the corners' alone (once taken, it is given up within
    /// `mountingThreshold` − `mountingStep`, so that an axis about the threshold does not come and go).
    static let mountingThreshold = 20.0
    /// Degrees the axis must turn about the vertical from `mountingAxis` to replace it (each change restarts the
    /// deviation from driving; its elevation does not move the heading).
    static let mountingStep = 2.0
    /// Degrees from the vertical within which the board's x gives no heading before the forward axis is known (a heading
    /// along an axis 60° steep swings twice as far as the board tilts).
    static let steepAxis = 30.0
    /// Told of the deviation from driving to keep (`keptDriving`'s new value), on the pipeline queue.
    public var onDrivingDeviation: (@Sendable (DrivingDeviationRecord) -> Void)?
    /// The deviation curve from the deviation file (`bearing swing`'s); the one learnt from driving, once it
    /// has one, takes its place (it is measured on the same compass heading, after the same calibration).
    public private(set) var measuredDeviation: DeviationCurve?
    /// The latest inertial sample's time (on land): a fix arriving now reaches the samples' clock then.
    private var lastInertial: Double?
    /// The samples' stamps made monotonic (a wall clock stepped): every time the fusion keeps from the samples.
    private var sampleClock = SampleClock()
    /// Told of each step of the samples' clock taken out (`SampleClock.lastStep`: seconds, forward positive), on the
    /// pipeline queue.
    public var onClockStep: (@Sendable (Double) -> Void)?
    /// When the mounting axis was last looked at without fixes (samples' clock).
    private var axisCheckedAt = -Double.infinity
    /// The latest fix's own time taken by `learnDeviation`: the same again (a frozen TPV) is no new epoch.
    private var lastFixTime: Double?
    /// The shortest interval (s) between the epochs the deviation from driving, the course's trim, the mounting and
    /// online calibration's course checks learn from: a receiver at 5 or 10 Hz gives them one epoch about each second
    /// (every 4th or 8th), as a 1 Hz one does, whose counts and time constants they were made for; a 1 Hz track
    /// stamped by a logger, its intervals 0.7–1.3 s, keeps nearly all. Every fix's speed still takes the vehicle's own
    /// acceleration out (`VehicleAcceleration.epoch`). On the simulated drives
    /// (`RoadDriveTests.testAReceiverGivingFiveOrTenFixesASecond`) a 10 Hz receiver's own courses 0.51° → 0.43°, 5 Hz
    /// 0.59° → 0.55° (1 Hz: 0.51°).
    static let learningEpochInterval = 0.75
    /// On land (`vehicle` car or rover): the vehicle's own acceleration, from the fixes' speed, taken out of the
    /// accelerometer before the filter (its "up" and online calibration's); nil otherwise.
    private var motion: VehicleAcceleration?
    /// On land, the vehicle's forward axis in the levelled board frame (`VehicleAcceleration.forward`); nil otherwise.
    public var vehicleForward: Vector3? { motion?.forward }
    /// Online calibration's quality word, kept from its latest state (it changes only with an event).
    private var quality: String?
    /// Online calibration's judgement of each field sample, as episodes of interference.
    public private(set) var episodes = InterferenceEpisodes()
    /// Told of each change the online calibration makes (nil: an episode of interference began or ended, the
    /// state's `episode`), with its state after it, on the pipeline queue.
    public var onOnlineEvent: (@Sendable (CalibrationChange?, OnlineCalibrationState) -> Void)?

    private var calibration: ActiveCalibration?
    private var accelerometerCalibration: ActiveCalibration?
    /// Chip axes → levelled board frame: each sensor's orientation, then the mounting level.
    private var imuToLevel: Matrix3
    private var magnetometerToLevel: Matrix3
    private var local: LocalField? {
        didSet { northTurn = local.map { Quaternion.aboutZ(-$0.declination.value * .pi / 180) } }
    }
    /// The turn from magnetic to true north at `local` (`Quaternion.trueNorth(declination:)`'s), kept with it.
    private var northTurn: Quaternion?
    /// Whether the filter runs with `parametersWithoutGyroscope`.
    private var withoutGyroscope = false
    private var referenceGiven: MagneticFieldReference?
    /// In a vehicle (car, rover, boat): a steady turn is no rest (`makeFilter`).
    private let inAVehicle: Bool
    /// The latest field sample, board frame, µT, with its status letter.
    private var field: (value: Vector3, status: String)?

    public init(imuOrientation: Orientation, magnetometerOrientation: Orientation, trueNorth: Bool,
                parameters: AttitudeFilterParameters = AttitudeFilterParameters(),
                parametersWithoutGyroscope: AttitudeFilterParameters = .withoutGyroscope, auto: AutoCalibrationMode = .off,
                vehicle: Vehicle = .none) {
        self.auto = auto
        driving = vehicle.learnsFromDriving ? PassiveDeviation() : nil
        tracksCourse = vehicle.learnsFromDriving
        motion = vehicle.learnsFromDriving ? VehicleAcceleration() : nil
        onlineSettings = vehicle.learnsFromDriving ? .forLand : OnlineCalibrationSettings()
        let inAVehicle = vehicle != .none
        self.inAVehicle = inAVehicle
        filter = Self.makeFilter(parameters, reference: nil, inAVehicle: inAVehicle)
        self.parameters = parameters
        self.parametersWithoutGyroscope = parametersWithoutGyroscope
        self.imuOrientation = imuOrientation
        self.magnetometerOrientation = magnetometerOrientation
        self.trueNorth = trueNorth
        imuToLevel = imuOrientation.matrix
        magnetometerToLevel = magnetometerOrientation.matrix
    }

    ///
    /// `elapsed`: for a sample, the seconds on a monotonic clock when it was handed over (the daemon's pipeline clock:
    /// the black box records it, and a replay sets it again), which tells a wall clock stepped forward from samples lost
    /// (`SampleClock`). Nil where there is none (a file of samples, the simulator).
    public mutating func step(_ input: FusionInput, elapsed: Double? = nil) {
        emitted = nil
        switch input {
        case .fix(let f):
            if motion != nil, let time = f.time?.unixTime, f.mode >= .twoD, let speed = f.speed {
                motion?.epoch(speed: speed, fixTime: time, arrival: lastInertial ?? time)
                // A land vehicle standing still: no disturbance is a step of its iron while it does (a lorry beside it).
                online?.vehicleSpeed(speed, time: lastInertial ?? time)
            }
            learnDeviation(f)
        case .deviation(let curve):
            measuredDeviation = curve
        case .calibration(let c):
            calibration = c
            driving?.restart(at: nil)
            drivingTable = nil
            if auto != .off { startOnline() }
            episodes = InterferenceEpisodes()
            updateReference()
            restoreDriving()
        case .onlineMode(let mode, let lastStamp):
            guard auto != .off, mode != .off, let online else { return }
            auto = mode
            note(OnlineCalibrationEvent(time: lastStamp, kind: mode == .locked ? .lock : .unlock, regions: online.regions))
        case .onlineReset(let lastStamp):
            guard auto != .off, online != nil else { return }
            startOnline()
            episodes = InterferenceEpisodes()
            driving?.restart(at: nil)
            drivingTable = nil
            updateReference()
            note(OnlineCalibrationEvent(time: lastStamp, kind: .reset, regions: 0))
        case .drivingDeviation(let r):
            keptDriving = r
            keptForward = (try? r?.forwardAxis()) ?? nil
            // So does the vehicle's "up": in force at once, as that many epochs of the mean (`keptUpEpochs`).
            if let u = (try? r?.upAxis()) ?? nil {
                vehicleUp = u
                vehicleUpWeight = Self.keptUpEpochs
            }
            // The forward axis does not depend on the calibration: put back whatever is in force, with the yaw the
            // kept observations were seen with.
            if let f = keptForward {
                motion?.restore(forward: f)
                updateMountingAxis(restartingDeviation: false)
            }
            if driving?.curve == nil { restoreDriving() }
        case .accelerometerCalibration(let c):
            accelerometerCalibration = c
        case .level(let l):
            guard l != level else { return }
            let m = l?.matrix ?? .identity, turn = m * (level?.matrix ?? .identity).transposed
            level = l
            imuToLevel = m * imuOrientation.matrix
            magnetometerToLevel = m * magnetometerOrientation.matrix
            // What was learnt of the vehicle in the old frame (its forward axis, its "up") is turned into the new one.
            motion?.changeFrame(by: turn)
            mountingAxis = mountingAxis.map { turn * $0 }
            vehicleUp = vehicleUp.map { turn * $0 }
            restartFilter(filter.parameters)
        case .localField(let f):
            local = f
            expectLocalField()
            updateReference()
        case .magnetic(let s):
            let correction: MagneticCalibration
            // Learnt in place, so that `online` is always the calibration in force (a copy taken out and put
            // back after adopting let a change be judged against the one it replaced), and no copy in and out
            // costs ~1,600 instructions a sample.
            // The field's instant, from the last gyroscope sample (0 without `magDelay`): once for both its uses.
            let t = time(of: s.time, elapsed: elapsed)
            let lead = filter.fieldLead(t)
            if online != nil {
                if auto == .track && !s.overflow { learn(s, at: t, lead: lead) }
                correction = online!.inForce
            } else {
                correction = calibration.flatMap { $0.chip == s.chip ? $0.correction : nil } ?? .identity
            }
            let b = magnetometerToLevel * correction.apply(s.field)
            field = (b, s.overflow ? "P" : (correction.isIdentity ? "C" : "N"))
            if !s.overflow { filter.updateMagnetometer(b, at: t, lead: lead) }
        case .inertial(let s):
            let t = time(of: s.time, elapsed: elapsed)
            let correction = accelerometerCalibration.flatMap { $0.chip == s.chip ? $0.correction : nil } ?? .identity
            let toLevel = imuToLevel
            let acc = toLevel * correction.apply(s.acceleration)
            let rate = s.angularRate.map { toLevel * $0 }
            // The vehicle's own acceleration out, for the filter only: ATT reports the specific force measured.
            var gravity = acc
            if let rate, motion != nil {
                // The board's up and whether a speed is known, once for the sample's every use.
                let w = rate - filter.gyroBias, up = boardUp, knowsSpeed = motion?.knowsSpeed(at: t) == true
                if let a = motion?.acceleration(at: t, angularRate: w) { gravity = acc - a }
                motion?.observe(specificForce: acc, angularRate: w, at: t)
                // Without a speed, while it tilts as a vehicle does, the corners alone find the forward axis
                // (`VehicleAcceleration.forwardWithoutSpeed`); it is looked at once a second here (with fixes, at each).
                // A steep board's provisional axis waits for a fix: without one nothing says the board is in a vehicle
                // (`bearing attitude` takes a car by default, and a board in a hand is often steep).
                if !knowsSpeed {
                    if tiltRate < Self.carLikeTiltRate { motion?.observeTurn(specificForce: acc, angularRate: w, up: up, at: t) }
                    if t - axisCheckedAt >= 1 {
                        axisCheckedAt = t
                        updateMountingAxis(restartingDeviation: true, steepRule: false)
                        // The vehicle's "up" from the same turns, until a fix at speed (or one kept) gives it.
                        if vehicleUpWeight == 0, let u = motion?.upWithoutSpeed { vehicleUp = u }
                    }
                }
                // Only what it needs of the motion: `if let motion` copied the whole of it every sample.
                tuneToMotion(knowsSpeed: knowsSpeed, rate: w, up: up, at: t)
            }
            if (rate == nil) != withoutGyroscope {
                withoutGyroscope = rate == nil
                restartFilter(withoutGyroscope ? parametersWithoutGyroscope : parameters)
            }
            let losses = filter.orientationLosses
            if let rate { filter.updateGyroscope(rate, at: t) }
            // Across a gap too long to bridge (`AttitudeFilter.longestBridge`) the 6D frame's heading is not the one before
            // it: what was followed in that frame (the field, the course carried) starts again.
            let lost = filter.orientationLosses != losses
            if lost { online?.frameRestarted() }
            if let last = lastInertial, rate != nil, tracksCourse { courseTrim.gyroscopeGap(seconds: t - last, bridged: !lost) }
            if motion != nil { lastInertial = t }
            // An axis at the end of its range reads less than the motion: no "up" from it.
            if !s.saturated { filter.updateAccelerometer(gravity, at: t) }
            if filter.hasMagnetometer, let field { emitted = attitude(s, at: t, acceleration: acc, angularRate: rate, field: field) }
        }
    }

    /// A land vehicle's time constants for the sample at `t`, while it tilts as slowly as a vehicle does
    /// (`carLikeTiltRate`): the accelerometer's `tauAccWithoutSpeed`, or `tauAccWithSpeed` while GNSS speed takes its acceleration out, the
    /// heading's `tauMagOnLand` while a rest measured the gyroscope's bias lately (`biasStaleTime`), else
    /// `tauMagOnLandBiasStale`; the filter's own otherwise.
    /// `rate` is the gyroscope's with its bias out, `up` the board's (levelled axes).
    private mutating func tuneToMotion(knowsSpeed: Bool, rate w: Vector3, up: Vector3, at t: Double) {
        let tilt = (w - up * w.dot(up)).length * 180 / .pi
        let dt = lastInertial.map { min(max(t - $0, 0), 1) } ?? 0
        tiltRate += (tilt - tiltRate) * min(1, dt / Self.tiltRateTime)
        let carLike = tiltRate < Self.carLikeTiltRate
        let own = filter.parameters.tauAcc
        let tau = !carLike ? own : max(own, knowsSpeed ? Self.tauAccWithSpeed : Self.tauAccWithoutSpeed)
        if filter.accelerometerTimeConstant != tau { filter.retuneAccelerometer(tau: tau) }
        if filter.restTaken { lastRest = t }
        let biasMeasured = sinceRest(at: t) != nil
        let ownMag = filter.parameters.tauMag
        let tauMag = carLike ? max(ownMag, biasMeasured ? Self.tauMagOnLand : Self.tauMagOnLandBiasStale) : ownMag
        if filter.magnetometerTimeConstant != tauMag { filter.retuneMagnetometer(tau: tauMag) }
    }

    /// The seconds at `t` since the filter's bias update last took a rest, nil where that is more than `biasStaleTime`
    /// (or none yet): the bias is then not taken as measured.
    private func sinceRest(at t: Double) -> Double? {
        lastRest.map { t - $0 }.flatMap { $0 <= Self.biasStaleTime ? $0 : nil }
    }

    /// A new attitude filter with `parameters`: its frame has another origin, so what online calibration and the
    /// course's trim followed in the old one no longer holds.
    private mutating func restartFilter(_ parameters: AttitudeFilterParameters) {
        filter = Self.makeFilter(parameters, reference: referenceGiven, inAVehicle: inAVehicle)
        lastRest = nil
        online?.frameRestarted()
        courseTrim.frameRestarted()
        trimBias = nil
        trimLearnt = false
    }

    /// A sample's time on the fusion's clock (`SampleClock`), from its stamp and its monotonic time; a step taken out is
    /// told (`onClockStep`).
    private mutating func time(of stamp: GPSTimestamp, elapsed: Double?) -> Double {
        let steps = sampleClock.steps
        let t = sampleClock.time(stamp.unixTime, elapsed: elapsed)
        if sampleClock.steps != steps { onClockStep?(sampleClock.lastStep) }
        return t
    }

    /// A new attitude filter; in a vehicle (car, rover or boat) a rest must agree with the bias learnt (a car's steady
    /// bend, a boat's steady turn on flat water do not; a straight road does: `AttitudeFilter.restMustMatchBias`). A
    /// board in the hand, or on a mast, takes every rest.
    private static func makeFilter(_ parameters: AttitudeFilterParameters, reference: MagneticFieldReference?, inAVehicle: Bool) -> AttitudeFilter {
        var filter = AttitudeFilter(parameters: parameters, magneticReference: reference)
        filter.restMustMatchBias = inAVehicle
        return filter
    }

    /// One field sample into the online calibration, with the filter's "up" in the chip's axes at the instant it
    /// describes, `lead` seconds after the last gyroscope sample (`AttitudeFilter.fieldLead(_:)`); a fit when one is
    /// due (every `fitInterval` of sample time: a replay fits where the live run did). `t`: the sample's time on the
    /// fusion's clock (`SampleClock`).
    private mutating func learn(_ s: MagneticSample, at t: Double, lead: Double) {
        // The orientation of the field sample's own instant (a row's field sample comes before its inertial one).
        let toSensor = magnetometerToLevel.transposed, toIMU = filter.quaternion6D(turnedBy: lead).conjugate
        // Before the first accelerometer sample the filter's "up" is the identity's (a board upside down, for a z-down
        // chip): a field sample then has no "up", nor a gyroscope's heading to bin a turn by.
        let inclined = filter.hasInclination
        let up = inclined ? toSensor * toIMU.rotate(Vector3(0, 0, 1)) : nil
        var changes: [CalibrationChange] = scaledAtTheFix.map { [$0] } ?? []
        scaledAtTheFix = nil
        // Without a gyroscope the 6D orientation has no heading of its own to bin a turn by.
        let east = withoutGyroscope || !inclined ? nil : toSensor * toIMU.rotate(Vector3(1, 0, 0))
        if let change = online!.add(s.field, up: up, east: east, time: t) { changes.append(change) }
        if case .refused(let inForce, let candidate) = online!.takeJudgement() {
            note(OnlineCalibrationEvent(time: s.time, kind: .refused, before: inForce.total, after: candidate.total, regions: online!.regions))
        }
        // The episodes on the fusion's clock: a step of the samples' clock neither ends nor stretches one, and the
        // journal's once-a-minute limit and CALIBRATION's seconds are timed on it too (`OnlineCalibrationState.clockTime`).
        let episode = episodes.observe(online!.interference, normOff: online!.departure.norm, dipOff: online!.departure.dip, at: t)
        if online!.fitDue(at: t) {
            switch online!.fit(at: t) {
            case .accepted(let change): changes.append(change)
            case .kept(let inForce, let candidate):
                note(OnlineCalibrationEvent(time: s.time, kind: .refused, before: inForce.total, after: candidate.total, regions: online!.regions))
            case .disagreesWithCourse(let inForce, let candidate, _, _):
                note(OnlineCalibrationEvent(time: s.time, kind: .refusedByCourse, before: inForce.total, after: candidate.total, regions: online!.regions))
            case .notEnough, .failed, .held, .refused: break
            }
        }
        // Mostly nothing changed: nothing to adopt or tell.
        guard !changes.isEmpty || episode != nil else { return }
        adopt(changes, at: s.time, episode: episode)
    }

    /// Puts the online calibration's changes in force in the filter and tells of them (and of an episode of
    /// interference that began or ended). `online` has learnt them already: it is the calibration in force.
    private mutating func adopt(_ changes: [CalibrationChange], at time: GPSTimestamp, episode: InterferenceEpisodes.Event?) {
        guard let online else { return }
        for change in changes {
            let kind: OnlineCalibrationEvent.Kind = change.scaled != nil ? .scaled : change.recalled ? .recalled : change.afterStep ? .step
                : change.fromCourse ? .course : .accepted
            note(OnlineCalibrationEvent(time: time, kind: kind, before: change.before.total, after: change.after.total, regions: change.regions))
            lastChange = time
            // One that turns the heading more than a refinement would: the deviation from driving starts again.
            filter.adopt(change, field: online.field, local: local?.reference, online: online)
            if change.turnsTheHeading {
                driving?.restart(at: sampleClock.time(ofStamp: time.unixTime))
                drivingTable = nil
                // An earlier calibration recalled: what was seen after it holds again.
                restoreDriving()
            }
            onOnlineEvent?(change, onlineState(at: time)!)
        }
        if let episode {
            var state = onlineState(at: time)!
            state.episode = episode
            onOnlineEvent?(nil, state)
        }
        if !changes.isEmpty || episode != nil {
            quality = online.quality(wmm: local?.reference)
        }
    }

    private mutating func note(_ event: OnlineCalibrationEvent) {
        history.append(event)
        if history.count > Self.historyLength { history.removeFirst(history.count - Self.historyLength) }
    }

    /// The deviation curve in force, every 10° of compass heading, and where it comes from: learnt from driving,
    /// else the swing's (`measured`); nil when neither is in force.
    public var deviationInForce: (source: String, points: [(compass: Double, deviation: Double)])? {
        let headings = stride(from: 0.0, to: 360, by: 10)
        if let drivingTable {
            return ("driving", headings.map { ($0, drivingTable.deviation(atCompassHeading: $0)) })
        }
        if let measuredDeviation, !measuredDeviation.coefficients.isEmpty {
            return ("swing", headings.map { ($0, measuredDeviation.deviation(atCompassHeading: $0)) })
        }
        return nil
    }

    /// One fix into the deviation from driving: the compass heading now (before deviation) against the course,
    /// with the gyroscope's turn rate since the fix before. Going straight at speed from a cold start, it also
    /// gives online calibration the hard iron (`OnlineMagnetometerCalibration.course`, along the forward axis learnt).
    private mutating func learnDeviation(_ f: GPSFix) {
        guard driving != nil, let stamp = f.time, f.mode >= .twoD, let track = f.track, let speed = f.speed,
              let variation = local?.declination.value, filter.hasMagnetometer else { return }
        // A fix repeated with the same time (a frozen TPV) is no new epoch.
        guard stamp.unixTime != lastFixTime else { return }
        // A receiver at 5 or 10 Hz: what learns from epochs takes one about each second (their errors are nearly alike
        // from one to the next, and every count and time constant below is a 1 Hz receiver's).
        if let last = lastFixTime, stamp.unixTime > last, stamp.unixTime - last < Self.learningEpochInterval { return }
        lastFixTime = stamp.unixTime
        updateMountingAxis(restartingDeviation: true)
        // The board's "up" at this epoch, for the vehicle's and, below, online calibration's (nothing between moves it).
        let levelledUp = boardUp
        if speed >= Self.vehicleUpSpeed {
            let up = levelledUp
            vehicleUpWeight = min(vehicleUpWeight + 1, Self.vehicleUpEpochs)
            vehicleUp = vehicleUp.map { ($0 + (up - $0) / vehicleUpWeight).normalized } ?? up
        }
        // The epoch on the samples' clock (when the fix arrived), as everything it is judged with: the field samples,
        // the gyroscope's heading, the deviation's restarts. A Pi without a real-time clock may run its system clock far
        // from GPS time until it syncs (`RoadDriveTests.testFixesOnAnotherClockThanTheSamples`).
        let time = lastInertial ?? stamp.unixTime
        // The vehicle's headings: along the forward axis where one is taken, else the board's x.
        let axis = mountingAxis ?? Vector3(1, 0, 0)
        let compass = Compass.normalize(AttitudeAngles.heading(filter.quaternion, along: axis))
        let gyroHeading = AttitudeAngles.heading(filter.quaternion6D, along: axis)
        if driving?.epoch(time: time, compass: compass, gyroHeading: gyroHeading, track: track, speed: speed, eps: f.eps, variation: variation) == true {
            drivingTable = driving?.table
            keepDriving(at: stamp)
        } else if motion?.forwardLearnt == true {
            keepDriving(at: stamp, epochTaken: false)
        }
        // "Up" and the board's forward axis in the magnetometer's frame.
        let toSensor = magnetometerToLevel.transposed
        let up = toSensor * levelledUp
        let forward = toSensor * (motion?.forward ?? Vector3(1, 0, 0))
        if online != nil {
            // Every fix's epoch, straight or not: the field since the fix before is a check of the course when the car
            // went straight since it (`CourseChecks`).
            online!.courseEpoch(driving?.straight == true ? track - variation : nil, up: up, forward: forward, time: time)
        }
        if tracksCourse {
            // A bias learnt since the last epoch (at a rest, in motion) changes how the gyroscope's heading drifts: one
            // second of the change, turned into the heading.
            let bias = filter.gyroBias
            if let before = trimBias, bias != before {
                let q = filter.quaternion6D
                let moved = AttitudeAngles.heading(q * Quaternion(rotationVector: before - bias), along: axis) - gyroHeading
                courseTrim.gyroscopeDriftChanged(by: SwingSolver.wrap180(moved), at: time)
            }
            trimBias = bias
            if driving?.straight == true {
                // The magnetic heading given now, deviation included, against the magnetic course.
                let deviation = drivingTable?.deviation(atCompassHeading: compass) ?? measuredDeviation?.deviation(atCompassHeading: compass) ?? 0
                if courseTrim.straightEpoch(course: track - variation, heading: compass + deviation, gyroHeading: gyroHeading, time: time,
                                            sinceRest: sinceRest(at: time)) {
                    trimLearnt = true
                }
            } else {
                courseTrim.interrupt(gyroHeading: gyroHeading, time: time)
            }
        }
        guard driving?.straight == true, auto == .track, !withoutGyroscope, online != nil else { return }
        let change = online!.course(track, declination: variation, up: up, forward: forward, time: time)
        adopt(change.map { [$0] } ?? [], at: lastInertial.map { GPSTimestamp(unixTime: sampleClock.stamp(ofTime: $0)) } ?? stamp, episode: nil)
    }

    /// `mountingAxis` from the forward axis known (`VehicleAcceleration.forwardKnown`): taken or given up across
    /// `mountingThreshold`, replaced where it has turned `mountingStep` about the vertical; a change restarts the
    /// deviation from driving, whose observations were seen along the old axis (the course's trim carries the heading
    /// across the change: it is what brings the compass to the course).
    private mutating func updateMountingAxis(restartingDeviation: Bool, steepRule: Bool = true) {
        guard let motion else { return }
        let current = mountingAxis, x = Vector3(1, 0, 0), q = filter.quaternion6D, up = boardUp
        let wanted: Vector3?
        if motion.forwardKnown {
            let f = motion.forward
            let threshold = motion.forwardFromCornersAlone ? 0 : Self.mountingThreshold
            let far = Self.degrees(between: f, x) > threshold - (current == nil ? 0 : Self.mountingStep)
            wanted = far ? f : nil
        } else {
            // Not yet known: a board whose x is within `steepAxis` degrees of the vertical has no heading along x (it
            // swings with every tilt), so until the forward axis is learnt the headings are taken along the board's axis
            // nearest the horizontal, whose heading differs from the vehicle's by a constant (the course's trim learns it).
            let elevation = Self.degrees(between: up, x)
            guard steepRule, current == nil, elevation < Self.steepAxis || elevation > 180 - Self.steepAxis else { return }
            wanted = abs(up.y) < abs(up.z) ? Vector3(0, 1, 0) : Vector3(0, 0, 1)
        }
        switch (wanted, current) {
        case (nil, nil): return
        case let (w?, c?):
            // The turn about the vertical: the axes projected on the horizontal.
            let a = w - up * w.dot(up), b = c - up * c.dot(up)
            guard a.length > 0.1, b.length > 0.1, Self.degrees(between: a.normalized, b.normalized) > Self.mountingStep else { return }
        default: break
        }
        // The gyroscope's heading is the vehicle's too: the course's trim turns what it carries with it.
        let moved = AttitudeAngles.heading(q, along: wanted ?? x) - AttitudeAngles.heading(q, along: current ?? x)
        courseTrim.gyroscopeHeadingMoved(by: SwingSolver.wrap180(moved))
        mountingAxis = wanted
        if restartingDeviation {
            driving?.restart(at: nil)
            drivingTable = nil
        }
    }

    /// The magnetometer correction in force: online calibration's, else the calibration file's.
    private var correctionInForce: MagneticCalibration { online?.inForce ?? calibration?.correction ?? .identity }

    /// Puts back the kept deviation from driving when the calibration in force is the one it was seen after.
    private mutating func restoreDriving() {
        guard driving != nil, let kept = keptDriving, kept.holds(under: correctionInForce, field: local?.reference.norm ?? 50),
              let observations = try? kept.observations() else { return }
        driving?.restore(observations)
        drivingTable = driving?.table
    }

    /// After an epoch taken: keeps the deviation from driving when a sector holds its first observation, and
    /// every `drivingKeepInterval` seconds while it learns; after any fix, the vehicle's forward axis once learnt, when it has
    /// moved `forwardKeepAngle` from the one kept (a board across the car gives the deviation nothing to learn: it
    /// is beyond `PassiveDeviation.Settings.maximumDeviation`).
    private mutating func keepDriving(at stamp: GPSTimestamp, epochTaken: Bool = true) {
        // Kept whether or not anyone is told: what the fusion does never depends on who listens.
        guard let driving else { return }
        let t = stamp.unixTime, sectors = driving.observations.filter { !$0.isEmpty }.count
        // The forward axis once this drive has learnt it, else the one kept before (not lost by a short drive).
        let before = keptForward
        let forward = motion?.forwardLearnt == true ? motion?.forward : before
        let moved = forward.map { f in before.map { Self.degrees(between: f, $0) > Self.forwardKeepAngle } ?? true } ?? false
        guard moved || epochTaken else { return }
        if let last = drivingKeptAt, sectors == last.sectors, t - last.time < drivingKeepInterval, !moved { return }
        drivingKeptAt = (t, sectors)
        let record = DrivingDeviationRecord(driving, after: correctionInForce, time: stamp.iso8601, forward: forward, up: vehicleUp)
        keptDriving = record
        keptForward = forward
        onDrivingDeviation?(record)
    }

    /// The vehicle's pitch and roll (degrees, as `AttitudeAngles`'s) for the board's orientation `q`, from the vehicle's
    /// forward axis and its "up" in the board's axes: its axes are down (−up), forward (the forward axis less its part
    /// along up: the forward axis's fit is a few degrees off, the mean up less) and right (down × forward). nil without
    /// an up, or with one along the forward axis.
    static func vehicleTilt(_ q: Quaternion, forward: Vector3, up: Vector3?) -> (pitch: Double, roll: Double)? {
        guard let up else { return nil }
        let level = forward - up * forward.dot(up)
        guard level.length > 0.1 else { return nil }
        let ahead = level.normalized, down = up * -1, right = down.cross(ahead)
        return AttitudeAngles.tilt(forward: q.rotate(ahead), right: q.rotate(right), down: q.rotate(down))
    }

    /// The board's "up" now, in its levelled axes (the 6D orientation's, which the magnetometer never tilts).
    private var boardUp: Vector3 { filter.quaternion6D.conjugate.rotate(Vector3(0, 0, 1)) }

    /// Degrees between two unit vectors.
    static func degrees(between a: Vector3, _ b: Vector3) -> Double { acos(max(-1, min(1, a.dot(b)))) * 180 / .pi }

    /// The online calibration's state now (nil when off).
    public func onlineState(at time: GPSTimestamp) -> OnlineCalibrationState? {
        guard let online else { return nil }
        var state = OnlineCalibrationState(online, mode: auto, time: time, wmm: local?.reference)
        state.changed = lastChange
        state.clockTime = sampleClock.time(ofStamp: time.unixTime)
        state.clockShift = sampleClock.shift
        // The episode's cause, not the latest sample's: a field flapping about a threshold is one episode.
        state.interference = episodes.current?.cause
        state.ongoing = episodes.current
        return state
    }

    /// Online calibration afresh from the calibration in force (its file's field and WMM's where that held), told WMM's
    /// field in force.
    private mutating func startOnline() {
        let c = calibration
        lastChange = nil
        online = OnlineMagnetometerCalibration(calibration: c?.correction, origin: c?.origin ?? .none, field: c?.field, fieldWMM: c?.fieldWMM,
                                               fieldFallback: c?.fieldFallback, settings: onlineSettings)
        expectLocalField()
        quality = online?.quality(wmm: local?.reference)
    }

    /// Online calibration told WMM's field in force (`local`): at the fix, or at the fallback position until the first.
    private mutating func expectLocalField() {
        guard let f = local else { return }
        // A calibration scaled to the first fix's field: adopted with the next field sample, which gives it a time.
        if let change = online?.expect(field: f.reference.norm, dip: f.reference.dip, atTheFix: f.declination.source == .fix) {
            scaledAtTheFix = change
        }
    }

    private mutating func updateReference() {
        let calibrated = online.map { $0.origin != .none } ?? calibration.map { !$0.correction.isIdentity } ?? false
        let wanted = calibrated ? MagneticFieldReference.read(local: local?.reference, scaledTo: online?.field ?? calibration?.field) : nil
        guard let wanted, wanted != referenceGiven else { return }
        filter.setMagneticReference(wanted)
        referenceGiven = wanted
    }

    /// `mutating` though it changes nothing: called from `step` (which holds `self` inout), a non-mutating method
    /// got a copy of the whole fusion every sample (~1,800 instructions, `bench/compass-cost`).
    private mutating func attitude(_ s: InertialSample, at t: Double, acceleration: Vector3, angularRate: Vector3?,
                          field: (value: Vector3, status: String)) -> Attitude {
        // The deviation in force at the compass heading turns the whole orientation about the vertical: the one
        // learnt from driving, else the measured one; the compass heading only where there is one. (Optional
        // chaining: `if let` or `??` on these copied the whole fusion every sample, 1,370 instructions, in a
        // release build.)
        let compass = filter.quaternion
        // On land, a board turned or standing in the vehicle: the turn from its x's heading to the vehicle's first, and
        // the deviation at the vehicle's compass heading.
        let axis = mountingAxis
        let table = drivingTable != nil || measuredDeviation?.coefficients.isEmpty == false
        var deviation: Double?
        // Only where there is something to add (the heading is an arctangent a sample).
        if axis != nil || table || trimLearnt {
            let boardHeading = AttitudeAngles.heading(compass)
            var vehicle = 0.0
            if let axis { vehicle = SwingSolver.wrap180(AttitudeAngles.heading(compass, along: axis) - boardHeading) }
            if vehicle != 0 { deviation = vehicle }
            if table {
                let heading = Compass.normalize(boardHeading + vehicle)
                var d = drivingTable?.deviation(atCompassHeading: heading)
                if d == nil { d = measuredDeviation?.deviation(atCompassHeading: heading) }
                if d != nil { deviation = vehicle + d! }
            }
            // On land, the course's trim where it holds: part of the deviation the headings include.
            if trimLearnt {
                let heading = boardHeading + (deviation ?? 0)
                let gyroHeading = AttitudeAngles.heading(filter.quaternion6D, along: axis ?? Vector3(1, 0, 0))
                courseTrim.follow(gyroHeading: gyroHeading)
                let trim = courseTrim.trim(at: heading, gyroHeading: gyroHeading, time: t)
                if trim != 0 { deviation = (deviation ?? 0) + trim }
            }
        }
        let magnetic = deviation.map { Quaternion.aboutZ(-$0 * .pi / 180) * compass } ?? compass
        let declination = trueNorth ? local?.declination : nil
        let q = declination == nil ? magnetic : (northTurn ?? .identity) * magnetic
        let angles = AttitudeAngles(q, body: .forwardRightDown)
        let magneticHeading = declination.map { Compass.normalize(angles.heading - $0.value) } ?? angles.heading
        let enu = q.rotate(field.value)
        let dip = atan2(-enu.z, (enu.x * enu.x + enu.y * enu.y).squareRoot()) * 180 / .pi
        var a = Attitude(time: s.time, device: s.device, heading: declination == nil ? nil : angles.heading,
                         magneticHeading: magneticHeading, field: field.value, dip: dip, magStatus: field.status,
                         declination: declination?.value, declinationSource: declination?.source)
        a.deviation = deviation
        a.quality = quality
        let held = filter.heldOnGyroscope
        if held > 0 { a.held = held }
        // A board upside down with its x forward takes no mounting axis, yet its own roll is 180° off the vehicle's: the
        // vehicle's tilt along the board's x then, once the vehicle's "up" says the board's z points up, not down.
        var tiltAxis = axis
        if tiltAxis == nil, let up = vehicleUp, up.z > 0 { tiltAxis = Vector3(1, 0, 0) }
        if let tiltAxis, let tilt = Self.vehicleTilt(q, forward: tiltAxis, up: vehicleUp) {
            (a.pitch, a.roll) = tilt
        } else {
            a.roll = angles.roll
            a.pitch = angles.pitch
        }
        a.yaw = angles.heading
        a.acceleration = acceleration
        a.angularRate = angularRate.map { $0 * (180 / .pi) }
        a.quaternion = q
        a.temperature = s.temperature
        return a
    }
}
