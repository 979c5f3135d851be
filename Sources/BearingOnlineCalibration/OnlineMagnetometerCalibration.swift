import BearingAttitude
import BearingCalibration
import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// Where the magnetometer calibration in force came from.
public enum CalibrationOrigin: String, Codable, Sendable {
    case none, manual, auto
}

/// `calibration.auto`: online calibration off, learning, or holding what it learnt.
public enum AutoCalibrationMode: String, Codable, Sendable, CaseIterable {
    case off, track, locked
}

/// `vehicle`: what the compass is mounted in. On land (car, rover) the course over ground at speed is the
/// heading, and the deviation is learnt from driving (`PassiveDeviation`); none (a mast, a bench) and boat
/// learn none that way.
public enum Vehicle: String, Codable, Sendable, CaseIterable {
    case none, car, rover, boat
    public var learnsFromDriving: Bool { self == .car || self == .rover }
}


/// How online calibration samples, fits and decides.
public struct OnlineCalibrationSettings: Equatable, Sendable {
    /// Seconds between samples taken into the point set (the rest only feed the step detector).
    public var sampleInterval = 0.1
    /// Seconds between fits.
    public var fitInterval = 10.0
    /// Regions (of `SphereRegions.count`'s equal-area regions, by field direction) the points must reach
    /// before a fit; or, for a vehicle that only turns (the field's directions a ring), `minimumTurnPoints`
    /// points with the horizontal field in `minimumSectors` of 12 heading sectors.
    public var minimumRegions = 24
    /// Regions under which a 3-D fit is partial: a fit on a quarter more regions replaces it on any real improvement
    /// (`OnlineMagnetometerCalibration.partialFitRegions`), until one on this many is in force.
    public var fullFitRegions = 52
    public var minimumTurnPoints = 12
    public var minimumSectors = 9
    /// Seconds a region's point is kept without a fresh sample.
    public var maximumAge = 1800.0
    /// Weight of a new sample in its region's point (an exponential mean: old samples fade, none dominates).
    public var pointWeight = 0.125
    /// A sample is suspect when its calibrated magnitude is off the field by more than this fraction, or its
    /// dip by more than `dipDisturbance` degrees.
    public var normDisturbance = 0.08
    public var dipDisturbance = 6.0
    /// Seconds a disturbance must last, unbroken, to be taken as a step of the hard iron rather than a
    /// passing one (a truck, a bridge).
    public var stepTime = 10.0
    /// A step found against the field followed in the gyroscope's frame (`followTheFrame`) needs what the samples
    /// leave to wander this many times more in the world's axes than in the sensor's. Afloat a field fixed in the
    /// world that holds still for 10 s is rare (the boat moves through it) and a boat's rolling turns it a little.
    /// On land (`forLand`) a car waits at a light beside a truck and drives straight beside a rail, where a field
    /// fixed in the world barely turns: it asks for `landStepWorldSpread`. Its loads switching (a fan, a heated
    /// window) are steps of the hard iron, and nothing else follows them without GNSS.
    public var stepWorldSpread = 1.25
    /// On the simulated drives (`RoadDriveTests`, seeds 1–8, 2026-11-30) without GNSS: off, RMS median 5.74°, worst
    /// seed 16.43°; 3, 4.87° and 9.32°; with GNSS the same 0.51° either way, since the course carried by the gyroscope
    /// (`CourseTrim`) no longer takes the compass's word between straights. Before it did, 3 cost one seed of 9–24
    /// 7.92° against 0.73° with GNSS, and this was off on land. Seeds 9–24, which it was not chosen on, without GNSS:
    /// 4.63° → 4.61° median, worst seed 8.25° and worst window 10.81° either way, seed 16's worst window 9.34° → 6.03°.
    public static let landStepWorldSpread = 3.0
    /// A land vehicle whose GNSS speed is below this (m/s) stands: a disturbance fixed in its axes then tells a
    /// step of its own iron from a lorry standing beside it at a light no better than time does, and the step's
    /// `stepTime` counts only once it moves (`OnlineMagnetometerCalibration.vehicleSpeed`). Each epoch holds for
    /// `standingHold` seconds: as long as the fusion's acceleration uses an epoch's speed
    /// (`VehicleAcceleration.epochSpeedLifetime`; GNSS at 1 Hz; none for longer, and the vehicle is no longer known
    /// to stand).
    public var standingSpeed = 1.0
    public var standingHold = VehicleAcceleration.epochSpeedLifetime
    /// Regions that must hold a point for a fit of the hard iron alone, after a step (the soft iron stays): the
    /// fewest samples the calibrator fits (`MagnetometerCalibrator.fewestSamples`, 8), whose fit the refinement starts
    /// from. It was 5, and the calibrator refused the fits on 5 to 7 points; letting the refinement start from the hard
    /// iron in force instead, with so few points, made the simulated drives without GNSS worse (seed 8 4.46° → 11.55°,
    /// median 3.78° → 4.61°: 5 points of a car's arc do not pin a hard iron).
    public var minimumStepRegions = MagnetometerCalibrator.fewestSamples
    /// Seconds a disturbance must last before earlier calibrations are tried on it (a magnet taken away
    /// again), and how many earlier calibrations are kept.
    public var recallTime = 2.0
    public var recallDepth = 4
    /// While a step's hard iron is learnt, an earlier calibration is put back (`recallFromTheFrame`) when it holds the
    /// latest samples' field fixed in the gyroscope's frame within this fraction of the step's wander (and explains
    /// them clearly better). Half, not `acceptRatio`: on the simulated drives without GNSS (`RoadDriveTests`,
    /// 2026-12-01) 0.5 put back the calibration from before a lorry at a light on the standing boards' seeds 2 and 5
    /// (13.86° → 5.64°, 14.40° → 10.09°) and one strong-iron seed of 9–24 (9.51° → 5.08°) and moved no other drive;
    /// 0.65 also undid real steps of the car's loads (the quiet drives' seed 3 3.34° → 5.59°, the median without GNSS
    /// 3.78° → 4.10°), where the earlier calibration's wander was 0.64–0.71 of the step's.
    public var stepRecallRatio = 0.5
    /// A new fit replaces the one in force only when its misfit on the same points is below `acceptRatio`
    /// times the old one's and lower by at least `acceptMargin` (hysteresis: no flip-flopping).
    public var acceptRatio = 0.8
    public var acceptMargin = 0.3
    /// A fit (a step's too, with a gyroscope) is put in force only once `validationSamples` samples after it (at
    /// `sampleInterval`), turned through enough directions, are explained better by it than by the calibration in
    /// force; refused when they are not, or when `validationTime` seconds pass first. 0: taken at once.
    public var validationSamples = 50
    /// With a gyroscope, the held fit must leave the field wandering in its frame below this times the wander
    /// under the calibration in force (1: better at all). The misfit on the fitted points already asks for a clear
    /// gain (`acceptRatio`, `acceptMargin`); asking it again on 50 unseen samples, where the noise makes two good
    /// fits differ by about 1%, refused every refinement of a good calibration (0.8 did: the simulator board kept
    /// its first fit at 0.5–1.1° instead of refining it to 0.3°; the boat trip, the road drives and the magnets on
    /// BROAD were all worse, and no BROAD trial better).
    public var validationRatio = 1.0
    public var validationTime = 120.0
    /// With a gyroscope, the held fit must also leave the field's horizontal direction in the gyroscope's frame (what
    /// the heading is made of) closer to its mean on more of the samples than the calibration in force does, by this
    /// many standard deviations of a sign test (`GyroAidedHardIron.headingWandersLess`). The wander of the whole field
    /// (`validationRatio`) counts the vertical too, which the heading does not see: on BROAD trial 05 with a 1.7 µT
    /// magnet mostly along the board's z, a fit that removed it but put a soft iron 2.9 % off between x and y lowered
    /// that wander by 2.5 % and the heading's by 0.1 %, and took the heading from 1.04° to 1.51°. 2: about 98 %
    /// one-sided for independent samples (these are not quite, so it asks for less than it says).
    public var validationHeadingZ = 2.0
    /// Whether the tilt a turn's points show is real (a boat rolling, a board in a hand). On land (`forLand`) it is
    /// mostly what is left of the vehicle's own acceleration (`VehicleAcceleration` takes out most, not all):
    /// then a turn's fit weighs each point's dip at `landDipWeight` of its magnitude (a turn needs the dip only
    /// for the vertical, and it must not pull the horizontal hard iron), and holds the soft iron between the
    /// horizontal and the vertical, which only the tilt shows.
    public var turnTiltIsReal = true
    public static let landDipWeight = 0.3
    /// A course-aided start (`OnlineMagnetometerCalibration.course`): epochs needed, within `courseWindow`
    /// seconds, agreeing within `courseSpread` of the field (median distance from their median hard iron).
    public var courseEpochs = 10
    public var courseWindow = 300.0
    public var courseSpread = 0.06
    /// A land vehicle turns about its vertical only: from a cold start a corner gives its hard iron from the
    /// gyroscope, with WMM's vertical field (`GyroAidedHardIron.solveLevel`). Off elsewhere: a board in a hand or on a
    /// boat tilts enough for the full solve, and in the daemon's simulator board (turning, rolling ±12°) a corner's
    /// provisional start made the calibration caught 32 s after the first change worse (0.4–1.1° against 0.2–0.4°).
    public var cornerStart = false
    /// On land with GNSS, a fit whose heading departs from the straight epochs' course (`CourseChecks.spread`) by
    /// more than this many degrees beyond the calibration in force's is not taken, however well it explains the
    /// field's points.
    public var courseTolerance = 0.2

    /// The settings for a land vehicle (`Vehicle.learnsFromDriving`).
    public static var forLand: OnlineCalibrationSettings {
        var s = OnlineCalibrationSettings()
        s.turnTiltIsReal = false
        s.stepWorldSpread = landStepWorldSpread
        // An uncompensated car (no fix) tilts its "up" by up to 9°: no disturbance, nor a step of the hard iron.
        s.dipDisturbance = 12
        s.cornerStart = true
        return s
    }

    public init() {}
}

/// How well a calibration explains a set of field points: the spread of the calibrated magnitude (% of its
/// mean) plus, where gravity is known, the spread of the dip (degrees). Both are zero for a perfect one.
public struct CalibrationMisfit: Equatable, Sendable {
    public var normPercent: Double
    public var dipDegrees: Double
    /// The mean dip, degrees (down positive), and the mean magnitude.
    public var meanDip: Double
    public var meanNorm: Double
    public var total: Double { normPercent + dipDegrees }
    /// The total with the dip weighed by `dipWeight` (a turn's fit on land: `OnlineCalibrationSettings.landDipWeight`).
    public func total(dipWeight: Double) -> Double { normPercent + dipWeight * dipDegrees }
}

/// A change of the calibration in force, for the journal: what changed, by how much and why.
public struct CalibrationChange: Equatable, Sendable {
    public var calibration: MagneticCalibration
    public var before: CalibrationMisfit
    public var after: CalibrationMisfit
    public var regions: Int
    /// How far the hard iron moved, in the field's units.
    public var offsetMoved: Double
    /// Whether a step (a persistent disturbance) started the learning that gave it.
    public var afterStep: Bool
    /// Whether it is an earlier calibration put back in force (the disturbance that replaced it went away).
    public var recalled = false
    /// Whether GNSS epochs going straight at speed gave it (`OnlineMagnetometerCalibration.course`): `regions`
    /// counts the epochs.
    public var fromCourse = false
    /// Whether the gyroscope's attitude gave it (`GyroAidedHardIron`): a cold start's strong hard iron, or a step's
    /// new one from the field followed in the gyroscope's frame.
    public var fromGyroscope = false
    /// The factor the calibration in force was scaled by at the first fix, from the fallback position's field it was
    /// learnt at to WMM's at the fix (`OnlineMagnetometerCalibration.expect(field:dip:atTheFix:)`); nil for any other.
    public var scaled: Double?

    /// Whether it turns the heading, not merely refines it: a step, a recall, or a hard iron moved by more than
    /// 1 % of the field (up to about 1.5° of heading at 65° dip). What was built on the calibration before it (the
    /// filter's settled heading, the deviation learnt from driving) then starts again.
    public var turnsTheHeading: Bool { afterStep || recalled || fromCourse || fromGyroscope || Self.turnsTheHeading(offsetMoved: offsetMoved, field: after.meanNorm) }

    /// Whether a hard iron moved by `offsetMoved` turns the heading of a field of magnitude `field` (µT).
    public static func turnsTheHeading(offsetMoved: Double, field: Double) -> Bool { offsetMoved > 0.01 * field }

    /// One line for the journal: what changed, by how much, and why it was taken.
    public var summary: String {
        if let scaled {
            return String(printf: "magnetometer calibration scaled by %.3f, field %.1f → %.1f: learnt at the fallback position's field before the first fix, "
                          + "now at WMM's at the fix (the heading is the same)", scaled, before.meanNorm, after.meanNorm)
        }
        if fromCourse {
            return String(printf: "magnetometer calibration changed: hard iron moved %.1f, field %.1f → %.1f: ", offsetMoved, before.meanNorm, after.meanNorm)
                + "\(regions) GNSS epochs going straight at speed give it (the course as the heading, WMM's field); a turn will refine it"
        }
        if fromGyroscope {
            return String(printf: "magnetometer calibration changed: hard iron moved %.1f, field %.1f → %.1f: ", offsetMoved, before.meanNorm, after.meanNorm)
                + (afterStep ? "a step of the hard iron, held still in the sensor's axes for 10 s, measured against the field followed in the gyroscope's frame"
                             : "the gyroscope's attitude over \(regions) samples gives it (the field fixed in its frame); the fits that follow refine it")
        }
        let why = recalled ? "an earlier calibration explains the field again (the disturbance that replaced it is gone)"
            : "\(afterStep ? "after a step of the hard iron, " : "")a fit on \(regions) directions explains them better"
        return String(printf: "magnetometer calibration changed: hard iron moved %.1f, misfit %.1f %% + %.1f° → %.1f %% + %.1f°: ",
                      offsetMoved, before.normPercent, before.dipDegrees, after.normPercent, after.dipDegrees) + why
    }
}

/// Hard- and soft-iron calibration learnt while the vehicle moves. Each field sample (with the fused "up"
/// in the sensor frame) updates a bounded set of points, one per direction region, each an exponential
/// mean aged out after `maximumAge`. Every `fitInterval` the calibrator (`MagnetometerCalibrator`: the
/// ellipsoid where the attitude spread allows, smaller models otherwise) is fitted to the points, and the
/// fit replaces the one in force only if it explains the same points clearly better (`acceptRatio`,
/// `acceptMargin`). A disturbance of magnitude or dip that lasts `stepTime` is a step (a magnet attached,
/// a new battery): the points from before it are dropped and learning starts again from the samples of the
/// disturbance; a shorter one is a passing disturbance, and its samples are never learnt.
/// Pure: no clock of its own, no I/O; `add` is cheap, `fit` is the expensive part, to be run off the
/// per-sample path.
public struct OnlineMagnetometerCalibration: Sendable {
    public let settings: OnlineCalibrationSettings
    public private(set) var inForce: MagneticCalibration {
        didSet { inForceInverse = inForce.matrix.inverse }
    }
    /// `inForce.matrix⁻¹`, kept with it: the field followed in the gyroscope's frame is compared in raw units.
    private var inForceInverse: Matrix3?
    public private(set) var origin: CalibrationOrigin
    /// The magnitude calibrated fields are scaled to (WMM's at the fix when known; else the first fit's) where the
    /// vehicle is now: it follows WMM's from fix to fix (`expect(field:dip:atTheFix:)`).
    public private(set) var field: Double?
    /// WMM's magnitude at the fix where `field` holds (nil: none known since it was set): kept with the calibration
    /// (`OnlineCalibrationRecord.fieldWMM`), so that a daemon started far from where it was kept scales `field` at its
    /// first fix.
    public private(set) var fieldWMM: Double?
    /// Whether `field` is WMM's at a position other than the fix (the daemon's fallback position) and nothing has been
    /// put in force since: WMM's at the fix replaces it (`expect(field:dip:atTheFix:)`).
    private var fieldFromElsewhere = false
    /// WMM's magnitude at the position given in place of the fix (the daemon's fallback position), when the calibration
    /// in force was put in force scaled to it, before any fix (nil: it was not): at the first fix it is scaled to WMM's
    /// there (`expect(field:dip:atTheFix:)`). Kept with the calibration (`OnlineCalibrationRecord.fieldFallback`), so
    /// that a daemon started again before a fix scales it at its own first fix.
    public private(set) var fieldFallback: Double?
    /// Whether every sample is being learnt (no calibration yet, or since a step), rather than only those
    /// the calibration in force finds undisturbed.
    public private(set) var learning: Bool
    public private(set) var steps = 0
    /// The misfit of the calibration in force on the points when it was last judged.
    public private(set) var misfit: CalibrationMisfit?
    /// Why the latest sample was not taken as the Earth's field (nil: it was).
    public private(set) var interference: Interference?
    /// How far the latest sample judged was off the field expected: its magnitude (% of the field, signed) and its
    /// dip (degrees, signed); zero while learning.
    public private(set) var departure = (norm: 0.0, dip: 0.0)

    struct Point {
        var raw: Vector3
        var up: Vector3?
        var time: Double
    }
    /// One point per direction region (`SphereRegions`) of the field less the hard iron: the points a 3-D fit uses.
    private var points: [Point?] = Array(repeating: nil, count: SphereRegions.count)
    /// One point per 10° of heading (the field's horizontal direction about the first "up"): the points a
    /// turn-only fit uses, where a ring of field directions falls in too few regions.
    private var ring: [Point?] = Array(repeating: nil, count: 36)
    /// Whether a point of the ring was binned by its field's direction (no gyroscope's east for it): the cells then
    /// do not say which headings the vehicle turned through.
    private var ringBinnedByField = false
    private var ringBasis: (Vector3, Vector3)?
    /// WMM's dip at the fix (degrees, down positive), when known: it tells a turn's vertical hard iron from its mirror image.
    public private(set) var dipReference: Double?
    /// Samples of a disturbance that may turn out to be a step (at most one per `sampleInterval`).
    private var pending: [(raw: Vector3, up: Vector3?, east: Vector3?)] = []
    private var disturbedSince: Double?
    /// Since when the disturbance has lasted with the vehicle not known to stand (`standingUntil`): a step's time.
    private var disturbedMovingSince: Double?
    /// Until when the latest GNSS epoch says a land vehicle stands (`vehicleSpeed`).
    private var standingUntil = -Double.infinity
    /// When the latest disturbed sample came: no fit within `stepTime` of it (its points may straddle a step).
    private var lastDisturbed: Double?
    private var lastTaken = -Double.infinity
    private var lastFramed = -Double.infinity
    private var lastGyroTry = -Double.infinity
    private var lastRecallTry = -Double.infinity
    private var lastStepRecallTry = -Double.infinity
    /// A gyroscope-aided solution held until the samples after it judge it.
    private var gyroHeld: (solution: GyroAidedHardIron.Solution, time: Double)?
    /// A fit held until the samples after it judge it, and those samples (at `sampleInterval`).
    private var heldFit: HeldFit?
    private var fresh: [Point] = []
    private var freshFramed: [GyroAidedHardIron.Sample] = []
    private var lastFresh = -Double.infinity
    /// A held fit refused by the samples after it, until told (`takeJudgement`).
    private var lastJudgement: Outcome?
    private var lastFit: Double?
    private var afterStep = false
    /// A step learnt with the calibration from before it still in force (no hard iron from the gyroscope explained its
    /// samples): that calibration and its misfit then (whose dip it judged the field by; a step is only found while not
    /// learning); and since when the field has agreed with it again. A disturbance that no hard iron explains and then
    /// goes (a steel box set down beside the board and taken away) is a step undone (`stepUndone`).
    private var beforeStep: (calibration: MagneticCalibration, misfit: CalibrationMisfit?)?
    private var agreeingSince: Double?
    /// A step whose hard iron the gyroscope's frame gave (`stepFromTheGyroscope`, `followTheFrame`), while it is learnt:
    /// the field in that frame it was solved against (`b`, followed under the calibration before it, whose soft iron it
    /// keeps) and that calibration with its misfit. The field moving again by what it moved at the step is the
    /// disturbance gone (`resolvedFromTheFrame`). `east`: the heading that field was followed at (`frameFieldEast`).
    private var stepFrame: StepFrame?
    typealias StepFrame = (b: Vector3, before: MagneticCalibration, misfit: CalibrationMisfit?, east: Vector3?)
    /// The gyroscope frame's east (in the sensor's axes) at the latest sample `frameField` followed: the heading it was
    /// followed at.
    private var frameFieldEast: Vector3?
    /// Since when the field under the step's calibration has been disturbed (`resolvedFromTheFrame`), and the latest 50
    /// of its samples in the gyroscope's frame (one per `sampleInterval`).
    private var resolving: (since: Double, samples: [GyroAidedHardIron.Sample])?
    /// The calibration in force came from a step's few directions: the next fits (more directions) replace it
    /// on any real improvement, until one from the full set of points (3-D, or a turn's whole ring) does.
    private var provisional = false
    /// The calibration in force is a cold start's hard iron from the gyroscope (`fitFromTheGyroscope`), judged on
    /// samples it did not see (a car's first corner: judged by the next, `unjudgedCorner`). Its misfit on the points,
    /// learnt over minutes of a car's loads switching, says less of it than that judgement does: a fit that replaces
    /// it must be borne out by the samples after it too.
    private var fromTheGyroscope = false
    /// The calibration in force is a corner's hard iron put in force from nothing before the next corner judged it
    /// (`fitFromTheGyroscope`): corners are still solved, and the next one's solution replaces it if it explains the
    /// samples after it clearly better; either way that judgement ends the start.
    private var unjudgedCorner = false
    /// The calibration in force came from part of a turn, with the horizontal field in this many of 12 heading
    /// sectors: a fit that covers more replaces it on any real improvement.
    private var partialTurnSectors: Int?
    /// The calibration in force is a 3-D fit on this many direction regions, fewer than `fullFitRegions` (part of the
    /// sphere, where its hard iron is still bent by what its soft iron cannot yet be told from): a fit on a quarter more
    /// regions replaces it on any real improvement. Without it the first fit stays: BROAD trial 26's, on 35 regions a
    /// minute in, was in force to the end, 0.7 µT off, while the fits after it explained the points 3–17 % better.
    private var partialFitRegions: Int?
    /// Calibrations in force earlier, newest last (the one at the start among them).
    private var earlier: [MagneticCalibration] = []
    /// A course-aided start: the raw field summed since the last epoch, and each straight epoch's hard iron
    /// (with its raw field and "up").
    private var courseSum = Vector3.zero
    private var courseCount = 0
    /// When the first of those samples came.
    private var courseSince = 0.0
    private var courseEpochs: [(offset: Vector3, point: Point)] = []
    /// The gyroscope's attitude with the raw field (`GyroAidedHardIron`): a cold start's hard iron however large,
    /// from a window of samples turning about more than one axis.
    private var gyroAided = GyroAidedHardIron()
    /// The Earth field in the gyroscope's frame, followed while the calibration in force explains the field: it
    /// gives a step's new hard iron from the step's own samples.
    private var frameField: Vector3?
    /// What the samples leave against `frameField`, in the sensor's axes and the frame's, while it is large.
    private var stepWindow: [(sample: GyroAidedHardIron.Sample, sensor: Vector3, world: Vector3, time: Double)] = []
    /// The latest samples in the gyroscope's frame (at least `stepTime` seconds of them, at most twice that, at
    /// `sampleInterval`).
    private var recent: [GyroAidedHardIron.Sample] = []
    /// On land with GNSS: the straight epochs' course, a check on each fit that the field never gave it.
    public private(set) var courseChecks = CourseChecks()

    /// `calibration` is the one in force at the start (a manual one is the baseline that tracking refines);
    /// `field` the expected magnitude in the samples' units, when known, and `fieldWMM` WMM's magnitude at the fix
    /// where it held, when known; else `fieldFallback`, WMM's at the fallback position where it held before any fix.
    public init(calibration: MagneticCalibration?, origin: CalibrationOrigin, field: Double? = nil, fieldWMM: Double? = nil,
                fieldFallback: Double? = nil, settings: OnlineCalibrationSettings = OnlineCalibrationSettings()) {
        self.settings = settings
        inForce = calibration ?? .identity
        inForceInverse = inForce.matrix.inverse
        self.origin = calibration == nil ? .none : origin
        self.field = field
        let magnitude = { (value: Double?) in value.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
        self.fieldWMM = field == nil ? nil : magnitude(fieldWMM)
        self.fieldFallback = field == nil || self.fieldWMM != nil || calibration == nil ? nil : magnitude(fieldFallback)
        learning = calibration == nil
    }

    /// Takes `norm` (WMM's field, in the samples' units) as the field to scale to, when none is known yet, and `dip`
    /// as the field's dip. `atTheFix`: WMM's at the fix, not at a position given in its place (the daemon's fallback
    /// position), which is the field to scale to only until the fix's comes, unless something was put in force
    /// meanwhile (scaled to it). Kept for good, a fallback far from the fix had every fit scale the field off WMM's
    /// there and the compass quality "poor" for good (the rig's Sydney 57.0 µT against 48.9 µT at the fix:
    /// `AttitudeFusionTests.testTheFallbackPositionsFieldGivesWayToTheFixsWhereNothingIsScaledToIt`).
    ///
    /// From fix to fix the field follows WMM's in proportion (× WMM's now / WMM's at the fix where it held, `fieldWMM`),
    /// whatever it was set from (WMM's, a fit's radius, a kept file's: one with no `fieldWMM` is tied to the first
    /// fix's): a vehicle that travels far meets an Earth's field of another magnitude (48.8 µT in the Solent, 38.6 µT off
    /// the Canaries), and a field held at the start's had every sample judged interference (norm) once 8 % off, and
    /// nothing learnt (`AttitudeFusionTests.testTheFieldJudgedFollowsWMMsAsTheVehicleTravels`).
    ///
    /// A calibration learnt before the first fix scaled to the fallback position's field: at the first fix it is
    /// scaled to WMM's there, in proportion (× WMM's at the fix / WMM's at the fallback position), an isotropic scale that
    /// leaves the heading, and the change is returned. Held at the fallback's, a board far from it judged its field by
    /// the wrong magnitude, and its compass quality read "poor", for good (Sydney's 57.0 µT against Southampton's 48.9 µT:
    /// `AttitudeFusionTests.testACalibrationLearntBeforeTheFirstFixIsScaledToTheFixsField`).
    @discardableResult
    public mutating func expect(field norm: Double, dip: Double, atTheFix: Bool = true) -> CalibrationChange? {
        var change: CalibrationChange?
        if norm.isFinite, norm > 0 {
            if field == nil || (fieldFromElsewhere && atTheFix) {
                field = norm
                fieldFromElsewhere = !atTheFix
                fieldWMM = atTheFix ? norm : nil
            } else if atTheFix, let held = field {
                if fieldWMM == nil, origin != .none, let from = fieldFallback, abs(norm / from - 1) > Self.fallbackScaleTolerance {
                    change = scale(by: norm / from, field: held)
                } else if let at = fieldWMM {
                    field = held * norm / at
                }
                fieldWMM = norm
                fieldFallback = nil
            }
        }
        if dip.isFinite { dipReference = dip }
        return change
    }

    /// How far (a fraction) WMM's magnitude at the first fix may be from the fallback position's with a calibration
    /// learnt at the latter left as it is: a fallback near the board (its home port, its garage) differs by hundredths
    /// of a percent, nothing the compass quality sees (it counts half the percentage), and no change for the journal.
    static let fallbackScaleTolerance = 0.01

    /// The calibration in force (learnt at the magnitude `held`) scaled by `factor`, and everything measured under it.
    private mutating func scale(by factor: Double, field held: Double) -> CalibrationChange {
        let before = misfit ?? CalibrationMisfit(normPercent: 0, dipDegrees: 0, meanDip: dipReference ?? 0, meanNorm: held)
        var after = before
        after.meanNorm *= factor
        inForce = MagneticCalibration(offset: inForce.offset, matrix: inForce.matrix * factor)
        field = held * factor
        if misfit != nil { misfit = after }
        fieldFallback = nil
        // What was followed, held or solved under the old scale is another field now.
        frameField = nil
        stepWindow.removeAll(keepingCapacity: true)
        stepFrame = nil
        resolving = nil
        heldFit = nil
        return CalibrationChange(calibration: inForce, before: before, after: after, regions: 0, offsetMoved: 0, afterStep: false, scaled: factor)
    }

    /// The points learnt before anything was in force could not be judged: once the start from the course puts a
    /// calibration in force, those it finds disturbed (their magnitude or dip beyond the disturbance thresholds: a car
    /// park's steel, a lorry at the start) are dropped, and no fit is made from them. Not after the gyroscope's start:
    /// a hard iron and a scale from a window of samples, it set good points aside too (on the simulated drives without
    /// GNSS seed 3 went 3.39° → 5.77°, and with a strong iron 2.95° → 8.16°).
    private mutating func dropDisturbedPoints() {
        guard let field else { return }
        let calibration = inForce, reference = dipReference, settings = settings
        func disturbed(_ p: Point) -> Bool {
            let c = calibration.apply(p.raw)
            if abs(c.length / field - 1) > settings.normDisturbance { return true }
            if let up = p.up, let reference, abs(Self.dip(c, up) - reference) > settings.dipDisturbance { return true }
            return false
        }
        for i in points.indices where points[i].map(disturbed) == true { points[i] = nil }
        for i in ring.indices where ring[i].map(disturbed) == true { ring[i] = nil }
    }

    private mutating func clearPoints() {
        points = Array(repeating: nil, count: SphereRegions.count)
        ring = Array(repeating: nil, count: ring.count)
        ringBinnedByField = false
    }

    /// The ring cell of `v`: its 10° of heading about the first "up". `v` is the gyroscope's east where
    /// known, else the field less the hard iron in force.
    private mutating func ringCell(_ v: Vector3, up: Vector3) -> Int {
        if ringBasis == nil { ringBasis = up.perpendicularBasis }
        let (e1, e2) = ringBasis!
        let a = atan2(v.dot(e2), v.dot(e1)) * 180 / .pi + 180
        return min(35, max(0, Int(a / 10)))
    }

    /// The 30° sectors of heading in the gyroscope's frame that the ring's points lie in (its cells are 10°).
    private var turnedSectors: Int { Set(ring.indices.filter { ring[$0] != nil }.map { $0 / 3 }).count }

    /// The fewest 30° sectors of the gyroscope's heading a turn's fit needs (7: 210°, more than half a turn). A ring
    /// fits a hard iron and a horizontal soft iron, five unknowns, and an arc of less than half a circle pins neither
    /// its centre nor its shape. The sectors about the hard iron the fit found (`OnlineCalibrationSettings.
    /// minimumSectors`, 9) do not tell: an arc fitted with a soft iron far enough off has its centre where the arc's
    /// points lie all round it. A simulated drive of 45 minutes without GNSS (`RoadDriveTests.testLongDrives`, seed 15)
    /// put such a fit in force from its cold start at 150 s: 5 sectors of heading, 9 about its hard iron (24.6 µT off),
    /// a soft iron of 0.84 and 1.31 on the board's x and y, 0.11 across (the car's is within 1 ± 0.06); its heading was
    /// 30–76° off from 400 s to the end (40.89° RMS). 6 and 7 sectors gave the same figures on every drive measured;
    /// 9 changed 4 of the 48 sixteen-minute drives by 0.3–4.4° each way.
    static let minimumTurnedSectors = 7

    /// Points held.
    public var regions: Int { points.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    /// The raw samples it holds now (µT, chip axes): one per direction region, then the turn ring's. What a fit
    /// is made from, for a client to see (`?CALIBRATION={"points":true};`).
    public var heldPoints: [Vector3] { points.compactMap { $0?.raw } + ring.compactMap { $0?.raw } }

    /// Takes one raw sample at `time` seconds. `up`: the unit "up" in the sensor frame from the fused
    /// attitude, nil before the filter has one. `east`: where there is a gyroscope, the east of the filter's
    /// 6D orientation (`AttitudeFilter.quaternion6D`: the gyroscope's heading, from an arbitrary start; the
    /// magnetometer never turns it) in the sensor frame: it turns with the vehicle as the field does.
    /// Returns the change when it put an earlier calibration back.
    @discardableResult
    public mutating func add(_ raw: Vector3, up: Vector3?, east: Vector3? = nil, time: Double) -> CalibrationChange? {
        guard raw.isFinite, raw != .zero else { return nil }
        courseChecks.sample(raw, time: time)
        if heldFit != nil, time - lastFresh >= settings.sampleInterval {
            fresh.append(Point(raw: raw, up: up, time: time))
            if let framed = GyroAidedHardIron.sample(raw, east: east, up: up, time: time) { freshFramed.append(framed) }
            lastFresh = time
            if let change = judgeHeld(at: time) { return change }
        }
        // The gyroscope's frame is followed at `sampleInterval` (whatever the magnetometer's rate: the same time
        // constants, and a tenth of the work at 100 Hz).
        let framed = time - lastFramed >= settings.sampleInterval ? GyroAidedHardIron.sample(raw, east: east, up: up, time: time) : nil
        if let framed {
            lastFramed = time
            recent.append(framed)
            // Trimmed in batches (the latest `stepTime` seconds are what is used): no shift of the array each sample.
            if let first = recent.first, time - first.time > 2 * settings.stepTime {
                recent.removeFirst(latestRecentStart)
            }
            if !learning, time - lastRecallTry >= settings.fitInterval {
                lastRecallTry = time
                if let change = recallFromTheFrame() { return change }
            } else if afterStep, time - lastStepRecallTry >= settings.fitInterval {
                // While a step is learnt, on its own clock: the tries above keep theirs.
                lastStepRecallTry = time
                if let change = recallFromTheFrame(duringAStep: true) { return change }
            }
        }
        if solvesCorners, let framed {
            gyroAided.add(framed)
            if time - lastGyroTry >= Self.gyroInterval {
                lastGyroTry = time
                if case .accepted(let change) = fitFromTheGyroscope(at: time) { return change }
            }
        }
        if origin == .none {
            if courseCount == 0 { courseSince = time }
            courseSum = courseSum + raw
            courseCount += 1
        }
        if !learning, let field {
            let c = inForce.apply(raw)
            let judged = judge(c, up: up, field: field, meanDip: misfit?.meanDip)
            departure = judged.departure
            let cause = judged.cause
            interference = cause
            if let framed {
                if let change = followTheFrame(framed, calibrated: c, field: field, time: time) { return change }
                if cause == nil && stepWindow.isEmpty {
                    // The field in the gyroscope's frame, followed over ~10 s (the frame's heading drifts slowly with
                    // the gyroscope's bias), while the samples agree with it.
                    let b = framed.inFrame(c)
                    frameField = frameField.map { $0 + (b - $0) * 0.01 } ?? b
                    frameFieldEast = framed.east
                }
            }
            if cause != nil {
                courseChecks.disturb()
                let since = disturbedSince ?? time
                disturbedSince = since
                lastDisturbed = time
                if time - lastTaken >= settings.sampleInterval, pending.count < 4096 {
                    pending.append((raw, up, east))
                    lastTaken = time
                    if time - since >= settings.recallTime, let change = recall() { return change }
                }
                // A vehicle standing still sees a lorry beside it as it would a new iron of its own: the step's time
                // runs only while it is not known to stand.
                if time < standingUntil {
                    disturbedMovingSince = nil
                } else if disturbedMovingSince == nil {
                    disturbedMovingSince = time
                }
                if let moving = disturbedMovingSince, time - moving >= settings.stepTime {
                    // A step: what was learnt before it no longer holds.
                    courseChecks.clear()
                    let before = (calibration: inForce, misfit: misfit)
                    let b = frameField, east = frameFieldEast
                    let held = stepFromTheGyroscope(at: time)
                    beforeStep = held == nil ? before : nil
                    agreeingSince = nil
                    enterStep(solvedAgainst: held == nil ? nil : b.map { ($0, before.calibration, before.misfit, east) })
                    for p in pending { take(p.raw, up: p.up, east: p.east, time: time) }
                    pending = []
                    disturbedSince = nil
                    disturbedMovingSince = nil
                    lastDisturbed = nil
                    return held
                }
                return nil
            }
            disturbedSince = nil
            disturbedMovingSince = nil
            pending.removeAll(keepingCapacity: true)
        } else if afterStep {
            interference = .step
            if stepUndone(framed, time: time) { return nil }
            if let framed, let change = resolvedFromTheFrame(framed, up: up, time: time) { return change }
        }
        guard time - lastTaken >= settings.sampleInterval else { return nil }
        lastTaken = time
        take(raw, up: up, east: east, time: time)
        return nil
    }

    /// How far the calibrated field `c` is off `field` (% of it, signed) and off the dip `meanDip` (degrees, signed; 0
    /// without an "up" or a dip), and why it is suspect (nil: it is not): off by more than the disturbance thresholds
    /// (`OnlineCalibrationSettings.normDisturbance`, `dipDisturbance`).
    private func judge(_ c: Vector3, up: Vector3?, field: Double, meanDip: Double?) -> (departure: (norm: Double, dip: Double), cause: Interference?) {
        let norm = 100 * (c.length / field - 1)
        var dip = 0.0
        if let up, let meanDip { dip = Self.dip(c, up) - meanDip }
        var cause: Interference? = abs(norm) > 100 * settings.normDisturbance ? .norm : nil
        if cause == nil, abs(dip) > settings.dipDisturbance { cause = .dip }
        return ((norm, dip), cause)
    }

    /// What the sample `s` leaves against the field followed in the gyroscope's frame (`frameField`), in the raw
    /// field's units: the sample less that field as the calibration in force makes it read (nil: none followed).
    private func frameResidual(_ s: GyroAidedHardIron.Sample) -> Vector3? {
        guard let b = frameField, let inverse = inForceInverse else { return nil }
        return s.raw - (inverse * s.sensed(b) + inForce.offset)
    }

    /// Whether what a sample leaves against the field followed in the gyroscope's frame (`frameResidual`) is more than
    /// that field and the calibration in force explain: 4 % of the field (and 1 µT).
    static func departsFromTheFrame(_ d: Vector3, field: Double) -> Bool { d.length >= max(0.04 * field, 1.0) }

    /// While a step is learnt with the calibration from before it still in force (`beforeStep`): once the field is the
    /// one followed in the gyroscope's frame again, as that calibration makes it read, for `stepTime` (each sample in
    /// the frame, `framed`, within `departsFromTheFrame`), the disturbance has gone and the step is undone. Its points,
    /// taken from the disturbance, are dropped; its misfit is the one from before it, learning ends, and the field is
    /// judged again. A real step of the hard iron leaves its own change in every sample, whatever the heading (it is
    /// fixed in the sensor's axes, and the step was found because it was large), even where the field's magnitude and
    /// dip happen to agree (a car going straight: on the simulated drives without GNSS, undoing a step on magnitude
    /// and dip alone took seed 3 from 1.99° to 3.20°). Without a gyroscope nothing is followed, and nothing undone.
    /// Before (2026-12-06) the field 30 % strong for 20 s left online calibration learning for the points' 30
    /// minutes, judging no disturbance, its one episode going on
    /// (`AttitudeFusionTests.testADisturbanceNoHardIronExplainsIsAStepUndoneWhenItGoes`).
    private mutating func stepUndone(_ framed: GyroAidedHardIron.Sample?, time: Double) -> Bool {
        guard let before = beforeStep, before.calibration == inForce, let field, let framed, let d = frameResidual(framed) else { return false }
        guard !Self.departsFromTheFrame(d, field: field) else {
            agreeingSince = nil
            return false
        }
        let since = agreeingSince ?? time
        agreeingSince = since
        guard time - since >= settings.stepTime else { return false }
        beforeStep = nil
        agreeingSince = nil
        afterStep = false
        learning = false
        misfit = before.misfit
        interference = nil
        heldFit = nil
        clearPoints()
        return true
    }

    /// While a step solved from the gyroscope's frame is learnt (`stepFrame`): a field the step took for the vehicle's own
    /// (a lorry beside a car standing at a light, without GNSS to say it stands) goes again, and the field under the
    /// step's calibration is then disturbed as the step's was (its magnitude or dip off, `judge`) for `stepTime`. Its
    /// hard iron is solved again against the field in the gyroscope's frame from before the step, as the step's was
    /// (`GyroAidedHardIron.offset(after:)`): within `departsFromTheFrame` of the hard iron from before the step, that
    /// calibration is put back (the step undone, as `stepUndone` undoes one no hard iron explained); otherwise it is the
    /// step's new hard iron (a load of the vehicle's own switched meanwhile), learnt on from there. Either is taken only
    /// if it explains the latest samples as the Earth's field (their mean magnitude and dip within half the disturbance
    /// thresholds, their spread `good`), which the step's calibration no longer does. This needs no
    /// turn, where an earlier calibration is recalled only once the samples have turned (`recallFromTheFrame`): a car
    /// that goes straight on from the light kept the lorry's field in its hard iron until its next corner.
    private mutating func resolvedFromTheFrame(_ framed: GyroAidedHardIron.Sample, up: Vector3?, time: Double) -> CalibrationChange? {
        guard let frame = stepFrame, let field else { return nil }
        // At the heading the frame's field was followed at only: see `stepFrameTurn`.
        guard let east = frame.east, east.dot(framed.east) >= cos(Self.stepFrameTurn) else {
            stepFrame = nil
            resolving = nil
            return nil
        }
        guard judge(inForce.apply(framed.raw), up: up, field: field, meanDip: misfit?.meanDip).cause != nil else {
            resolving = nil
            return nil
        }
        var r = resolving ?? (since: time, samples: [])
        r.samples.append(framed)
        if r.samples.count > 50 { r.samples.removeFirst() }
        resolving = r
        guard time - r.since >= settings.stepTime, r.samples.count >= 10,
              let o = GyroAidedHardIron.offset(after: r.samples, field: frame.b, matrix: inForce.matrix) else { return nil }
        resolving = nil
        let undone = !Self.departsFromTheFrame(o - frame.before.offset, field: field)
        let candidate = undone ? frame.before : MagneticCalibration(offset: o, matrix: inForce.matrix)
        let points = r.samples.map { Point(raw: $0.raw, up: $0.up, time: time) }
        // The step's calibration holds these samples' magnitude or dip off (they are disturbed under it), each as much
        // as the next: it is the candidate's mean magnitude and dip that must be the Earth field's.
        let before = Self.misfit(inForce, points), after = Self.misfit(candidate, points)
        guard explainsAsEarthsField(after, field: field, dip: misfit?.meanDip ?? dipReference) else { return nil }
        let change = CalibrationChange(calibration: candidate, before: before, after: after, regions: 0,
                                       offsetMoved: (candidate.offset - inForce.offset).length, afterStep: !undone,
                                       recalled: undone, fromGyroscope: !undone)
        putInForce(candidate, misfit: undone ? frame.misfit ?? after : after)
        // Put back, it is no earlier calibration to recall.
        earlier.removeAll { $0 == candidate }
        if undone {
            heldFit = nil
            clearPoints()
        } else {
            // Another step, solved against the same field in the frame.
            provisional = true
            enterStep(solvedAgainst: frame)
        }
        return change
    }

    /// How far (radians) the vehicle may have turned from the heading the frame's field was followed at before a step
    /// while the step's hard iron may be solved again against it (`resolvedFromTheFrame`); once it turns further, never
    /// again for that step. That field was followed under the calibration before the step, whose own hard-iron error it
    /// holds at that heading: solved again there, the hard iron keeps that error and no more; at another
    /// heading the error turns with the vehicle (by 2 sin(ψ/2) of it), and the frame's tilt in a turn without GNSS
    /// adds the vertical field's share. A car beside 12.8 µT of the street's field on a simulated drive without GNSS (seed 40) took
    /// a step at a corner, turned 90° and had its hard iron solved 17 µT off: 3.06° → 12.12°. A turn is what
    /// `recallFromTheFrame` and the step's fits judge by.
    static let stepFrameTurn = 15 * Double.pi / 180

    /// One GNSS epoch of a land vehicle going straight at speed (`PassiveDeviation.straight`), from a cold
    /// start (nothing in force): its course over ground `track` (degrees true) is the heading of the sensor's
    /// `forward` axis, so with `up` (both unit, sensor frame) and WMM's field (`expect`, and `declination`
    /// degrees east) the field the sensor should see is known, and the mean raw field since the epoch before,
    /// less it, is the hard iron. Andel et al. (Sensors 22(21):8447, 2022) calibrate a car's magnetometer from
    /// GNSS on the same idea. `courseEpochs` epochs within `courseWindow` that agree (`courseSpread`) put
    /// their median hard iron in force, scaled to WMM's field, provisionally: every sample is still learnt, and
    /// the first fit of a turn replaces it on any real improvement. Once only: refitting it as more headings
    /// come gained nothing on simulated drives (each change restarts the deviation learnt from driving), and
    /// a soft iron from a few headings' arc extrapolates badly to the others. Returns the change.
    public mutating func course(_ track: Double, declination: Double, up: Vector3, forward: Vector3, time: Double) -> CalibrationChange? {
        defer {
            courseSum = .zero
            courseCount = 0
        }
        // The field since the epoch before, only: after a turn or a stretch without fixes (an underground car park) the
        // samples since the last straight epoch span all of it.
        guard origin == .none, courseCount >= 5, time - courseSince <= VehicleAcceleration.epochSpeedLifetime,
              let field, let dip = dipReference,
              track.isFinite, declination.isFinite, time.isFinite, let axes = VehicleAxes(up: up, forward: forward) else { return nil }
        let raw = courseSum * (1 / Double(courseCount))
        let east = declination * .pi / 180
        let (north, eastward) = axes.northEast(heading: track * .pi / 180)
        let horizontal = field * cos(dip * .pi / 180)
        let expected = north * (horizontal * cos(east)) + eastward * (horizontal * sin(east)) + axes.down * (field * sin(dip * .pi / 180))
        courseEpochs.removeAll { time - $0.point.time > settings.courseWindow }
        courseEpochs.append((raw - expected, Point(raw: raw, up: axes.up, time: time)))
        if courseEpochs.count > 4 * settings.courseEpochs { courseEpochs.removeFirst() }
        guard courseEpochs.count >= settings.courseEpochs else { return nil }
        func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
        let offset = GyroAidedHardIron.median(courseEpochs.map(\.offset))
        guard median(courseEpochs.map { ($0.offset - offset).length }) <= settings.courseSpread * field else { return nil }
        // Scaled to WMM's field; a scale far from 1 is a sensor not in the field's units, or a misjudged start.
        let scale = field / median(courseEpochs.map { ($0.point.raw - offset).length })
        guard scale > 0.7 && scale < 1.4 else { return nil }
        let calibration = MagneticCalibration(offset: offset, matrix: Matrix3.identity * scale)
        let points = courseEpochs.map(\.point)
        let after = Self.misfit(calibration, points)
        let change = CalibrationChange(calibration: calibration, before: Self.misfit(inForce, points), after: after,
                                       regions: points.count, offsetMoved: (offset - inForce.offset).length, afterStep: false,
                                       fromCourse: true)
        putInForce(calibration, misfit: after)
        learning = true
        provisional = true
        courseEpochs = []
        dropDisturbedPoints()
        return change
    }

    /// One GNSS epoch of a land vehicle (`CourseChecks.epoch`): `course` its magnetic course (degrees) when it went
    /// straight at speed, nil when not; `up` and `forward` unit, in the sensor's frame.
    public mutating func courseEpoch(_ course: Double?, up: Vector3, forward: Vector3, time: Double) {
        courseChecks.epoch(course: course, up: up, forward: forward, time: time)
        // Not straight: the field since it is no straight epoch's (the next straight one starts afresh).
        if course == nil {
            courseSum = .zero
            courseCount = 0
        }
    }

    /// One GNSS epoch's speed (m/s) of a land vehicle, at `time` on the samples' clock: below `standingSpeed` it
    /// stands for the next `standingHold` seconds, and no disturbance becomes a step while it does.
    public mutating func vehicleSpeed(_ speed: Double, time: Double) {
        guard speed.isFinite, time.isFinite else { return }
        standingUntil = speed < settings.standingSpeed ? time + settings.standingHold : -.infinity
    }

    static func outer(_ a: Vector3, _ b: Vector3) -> Matrix3 {
        Matrix3([a.x * b.x, a.x * b.y, a.x * b.z], [a.y * b.x, a.y * b.y, a.y * b.z], [a.z * b.x, a.z * b.y, a.z * b.z])
    }

    /// An earlier calibration that explains the disturbance's samples as undisturbed, put back in force.
    private mutating func recall() -> CalibrationChange? {
        let samples = pending.map { Point(raw: $0.raw, up: $0.up, time: 0) }
        let easts = pending.map(\.east)
        guard samples.count >= 10, !earlier.isEmpty else { return nil }
        // Any calibration explains a still vehicle: the samples must have turned through a few directions.
        guard Set(samples.compactMap { SphereRegions.region(of: $0.raw - inForce.offset) }).count >= 4 else { return nil }
        let now = Self.misfit(inForce, samples)
        var best: (Int, CalibrationMisfit)?
        for (i, c) in earlier.enumerated() {
            let m = Self.misfit(c, samples)
            guard m.normPercent < 100 * settings.normDisturbance / 3,
                  m.dipDegrees < settings.dipDisturbance / 2 else { continue }
            if best.map({ m.total < $0.1.total }) ?? true { best = (i, m) }
        }
        guard let (i, m) = best, m.total < settings.acceptRatio * now.total else { return nil }
        // With a gyroscope, the earlier one must also hold the field fixed in the gyroscope's frame better.
        let framed = pending.compactMap { GyroAidedHardIron.sample($0.raw, east: $0.east, up: $0.up, time: 0) }
        if framed.count == pending.count {
            let inForce = self.inForce, c = earlier[i]
            guard GyroAidedHardIron.wander(framed, c.apply) < settings.acceptRatio * GyroAidedHardIron.wander(framed, inForce.apply) else { return nil }
        }
        // The points were learnt under the disturbance: the disturbance's samples start them afresh.
        let change = reinstate(i, before: now, after: m, samples: zip(samples, easts).map { ($0.raw, $0.up, $1, lastTaken) })
        self.field = m.meanNorm
        return change
    }

    /// An earlier calibration put back when it holds the latest samples' field (`recent`, the last `stepTime`
    /// seconds) fixed in the gyroscope's frame clearly better than the one in force (below `acceptRatio` of its
    /// wander) and explains them as the Earth's field: a change of the hard iron too small to disturb the field (a
    /// magnet of a few µT taken away again) that the fits of the points, which keep what was learnt before it, do not
    /// follow. The samples must have turned (4 direction regions or 4 of 12 heading sectors): going straight, any
    /// calibration holds the field still.
    ///
    /// `duringAStep`: while a step's new hard iron is learnt. A step that was no change of the vehicle's own iron (a
    /// lorry beside a car standing at a light, without GNSS to tell that the car stands) is undone once the vehicle
    /// turns: an earlier calibration must then hold the field still at most `stepRecallRatio` of the step's wander
    /// and explain the latest samples clearly better than the step's (below `acceptRatio` of its misfit), as well as
    /// explaining them as the Earth's field.
    private mutating func recallFromTheFrame(duringAStep: Bool = false) -> CalibrationChange? {
        guard !earlier.isEmpty, let field else { return nil }
        let samples = Array(recent[latestRecentStart...])
        guard samples.count >= Self.gyroValidationSamples else { return nil }
        let points = samples.map { Point(raw: $0.raw, up: $0.up, time: $0.time) }
        guard Self.turned(points, about: inForce.offset) else { return nil }
        let current = inForce
        let now = GyroAidedHardIron.wander(samples, current.apply)
        var best: (index: Int, wander: Double, misfit: CalibrationMisfit)?
        let ratio = duringAStep ? settings.stepRecallRatio : settings.acceptRatio
        let misfitInForce = duringAStep ? Self.misfit(current, points) : nil
        for (i, c) in earlier.enumerated() {
            let w = GyroAidedHardIron.wander(samples, c.apply)
            guard w < ratio * now, best.map({ w < $0.wander }) ?? true else { continue }
            let m = Self.misfit(c, points)
            guard explainsAsEarthsField(m, field: field, dip: nil) else { continue }
            if let misfitInForce, m.total >= settings.acceptRatio * misfitInForce.total { continue }
            best = (i, w, m)
        }
        guard let (i, _, m) = best else { return nil }
        // The points were learnt under the calibration just left: the latest samples start them afresh.
        let change = reinstate(i, before: Self.misfit(current, points), after: m, samples: samples.map { ($0.raw, $0.up, $0.east, $0.time) })
        heldFit = nil
        return change
    }

    /// Where the latest `stepTime` seconds of `recent` start (its end when it is empty).
    private var latestRecentStart: Int { recentStart(within: settings.stepTime) }

    /// Where the latest `seconds` of `recent` start (its end when it is empty).
    private func recentStart(within seconds: Double) -> Int {
        guard let latest = recent.last else { return recent.endIndex }
        return recent.firstIndex { latest.time - $0.time <= seconds } ?? recent.endIndex
    }

    /// The earlier calibration `index` put back in force (`recall`, `recallFromTheFrame`), and the points, learnt
    /// under the one it replaces, started afresh from `samples`.
    private mutating func reinstate(_ index: Int, before: CalibrationMisfit, after: CalibrationMisfit,
                                    samples: [(raw: Vector3, up: Vector3?, east: Vector3?, time: Double)]) -> CalibrationChange {
        let calibration = earlier.remove(at: index)
        let change = CalibrationChange(calibration: calibration, before: before, after: after, regions: 0,
                                       offsetMoved: (calibration.offset - inForce.offset).length, afterStep: false, recalled: true)
        putInForce(calibration, misfit: after)
        clearPoints()
        for s in samples { take(s.raw, up: s.up, east: s.east, time: s.time) }
        return change
    }

    private mutating func putInForce(_ calibration: MagneticCalibration, misfit: CalibrationMisfit) {
        earlier.removeAll { $0 == inForce }
        earlier.append(inForce)
        if earlier.count > settings.recallDepth { earlier.removeFirst() }
        inForce = calibration
        stepFrame = nil
        resolving = nil
        // Scaled to the fallback position's field (`fieldFromElsewhere`: nothing was put in force since it was taken),
        // or to the one in force before it, which was (no fix since).
        if fieldFromElsewhere { fieldFallback = field } else if fieldWMM != nil { fieldFallback = nil }
        fieldFromElsewhere = false
        // The field followed in the gyroscope's frame was the old calibration's: under the new one it is another
        // (a hard iron moved by x leaves a d of x fixed in the sensor's axes, which would read as a step).
        frameField = nil
        stepWindow.removeAll(keepingCapacity: true)
        origin = .auto
        learning = false
        afterStep = false
        fromTheGyroscope = false
        unjudgedCorner = false
        self.misfit = misfit
        interference = nil
        disturbedSince = nil
        disturbedMovingSince = nil
        lastDisturbed = nil
        partialTurnSectors = nil
        partialFitRegions = nil
        pending = []
    }

    /// A sample into its direction region's point and its heading's ring point. The ring is binned by the
    /// gyroscope's heading (`east`) where known: by the field's direction about a hard iron still unknown,
    /// one larger than the horizontal field would put a whole turn in a few cells.
    private mutating func take(_ raw: Vector3, up: Vector3?, east: Vector3?, time: Double) {
        guard let r = SphereRegions.region(of: raw - inForce.offset) else { return }
        Self.merge(raw, up: up, time: time, into: &points[r], weight: settings.pointWeight, far: settings.normDisturbance)
        if let up {
            let gyroscopesEast = east.flatMap { $0.isFinite ? $0 : nil }
            if gyroscopesEast == nil { ringBinnedByField = true }
            let cell = ringCell(gyroscopesEast ?? raw - inForce.offset, up: up)
            Self.merge(raw, up: up, time: time, into: &ring[cell], weight: settings.pointWeight, far: settings.normDisturbance)
        }
    }

    /// A sample into its cell's point: an exponential mean; a sample far from the point (the iron changed
    /// since) replaces it rather than blending in.
    private static func merge(_ raw: Vector3, up: Vector3?, time: Double, into point: inout Point?, weight w: Double, far: Double) {
        if var p = point, (raw - p.raw).length <= far * p.raw.length {
            p.raw = p.raw * (1 - w) + raw * w
            if let up { p.up = ((p.up ?? up) * (1 - w) + up * w).normalized }
            p.time = time
            point = p
        } else {
            point = Point(raw: raw, up: up, time: time)
        }
    }

    /// The outcome of the latest held fit's judgement when it was refused (nil: none since last asked), emptied.
    public mutating func takeJudgement() -> Outcome? {
        defer { lastJudgement = nil }
        return lastJudgement
    }

    /// Whether a fit is due at `time` (none while one is held for judgement).
    public func fitDue(at time: Double) -> Bool {
        if heldFit != nil { return false }
        if let disturbed = lastDisturbed, time - disturbed < settings.stepTime { return false }
        guard let last = lastFit else { return true }
        return time - last >= settings.fitInterval
    }

    /// What a fit attempt came to.
    public enum Outcome: Equatable, Sendable {
        case accepted(CalibrationChange)
        /// Fitted, but not better enough than the calibration in force (misfits: in force, candidate).
        case kept(inForce: CalibrationMisfit, candidate: CalibrationMisfit)
        case notEnough(regions: Int)
        case failed(String)
        /// Fitted, better on its points, and held until the samples after it judge it (`OnlineCalibrationSettings.
        /// validationSamples`): put in force then only if it explains them better too.
        case held(inForce: CalibrationMisfit, candidate: CalibrationMisfit)
        /// A held fit the samples after it did not bear out (misfits on them: in force, candidate).
        case refused(inForce: CalibrationMisfit, candidate: CalibrationMisfit)
        /// Better on its points (misfits: in force, candidate), but its heading departs further from the course on
        /// the straight epochs (`CourseChecks.spread`, degrees: in force, candidate).
        case disagreesWithCourse(inForce: CalibrationMisfit, candidate: CalibrationMisfit, courseInForce: Double, courseCandidate: Double)
    }

    /// The gyroscope frame restarted (a new attitude filter: the mounting level changed, the gyroscope came or
    /// went): the field followed in it, and the window of samples in it, no longer hold.
    public mutating func frameRestarted() {
        frameField = nil
        stepFrame = nil
        resolving = nil
        stepWindow.removeAll()
        gyroAided.removeAll()
        recent.removeAll()
    }

    /// The field's heading under `calibration` over the latest `seconds` of samples followed in the gyroscope's frame
    /// (the attitude filter's 6D frame, in which its heading is kept: `AttitudeFilter.magnetometerRecalibrated`): the
    /// circular mean, and the RMS of the samples' headings about it (radians). nil with fewer than
    /// `Self.fieldHeadingSamples` of them (no gyroscope, or just started).
    public func recentFieldHeading(under calibration: MagneticCalibration, seconds: Double) -> (mean: Double, spread: Double)? {
        let samples = recent[recentStart(within: seconds)...]
        guard samples.count >= Self.fieldHeadingSamples,
              let heading = GyroAidedHardIron.fieldHeading(Array(samples), calibration.apply) else { return nil }
        let spread = (heading.deviations.reduce(0) { $0 + $1 * $1 } / Double(heading.deviations.count)).squareRoot()
        return (heading.mean, spread)
    }

    /// The fewest samples `recentFieldHeading` gives a heading from (half a second at `sampleInterval`).
    static let fieldHeadingSamples = 5

    /// Each sample against the field followed in the gyroscope's frame: what it leaves, `d = raw − (matrix⁻¹·M·b +
    /// offset)`, is nearly zero while the calibration holds. A step of the hard iron leaves a `d` fixed in the
    /// sensor's axes whatever the board does; a passing field (a bridge, a hull, another boat) or the frame's own
    /// drift leaves one fixed in the world, which turns in the sensor's axes as the board turns. A `d` of at least
    /// 4 % of the field (and 1 µT) that has held still in the sensor's axes for `stepTime` seconds, while turning
    /// in the world's, is a step: its new hard iron (`offset + d`) is in force at once, the soft iron kept, and
    /// the step's fits refine it. This finds a step the magnitude alone does not (at some headings a new hard iron
    /// leaves the magnitude within the thresholds) and needs no disturbance that lasts. Returns the change.
    private mutating func followTheFrame(_ s: GyroAidedHardIron.Sample, calibrated c: Vector3, field: Double, time: Double) -> CalibrationChange? {
        guard settings.stepWorldSpread.isFinite, let b = frameField, let d = frameResidual(s) else { return nil }
        let large = Self.departsFromTheFrame(d, field: field)
        guard large || !stepWindow.isEmpty else { return nil }
        if !large {
            stepWindow.removeAll(keepingCapacity: true)
            return nil
        }
        stepWindow.append((s, d, s.inFrame(d), time))
        guard let first = stepWindow.first, time - first.time >= settings.stepTime, stepWindow.count >= 50 else { return nil }
        let n = Double(stepWindow.count)
        let meanSensor = stepWindow.reduce(Vector3.zero) { $0 + $1.sensor } * (1 / n)
        let meanWorld = stepWindow.reduce(Vector3.zero) { $0 + $1.world } * (1 / n)
        let spreadSensor = (stepWindow.reduce(0.0) { $0 + ($1.sensor - meanSensor).dot($1.sensor - meanSensor) } / n).squareRoot()
        let spreadWorld = (stepWindow.reduce(0.0) { $0 + ($1.world - meanWorld).dot($1.world - meanWorld) } / n).squareRoot()
        stepWindow.removeFirst()
        guard spreadSensor <= 0.35 * meanSensor.length, spreadWorld >= settings.stepWorldSpread * spreadSensor else { return nil }
        // A step: the new hard iron from the latest samples (the step's start may straddle it), as any step's.
        guard liesAtTheDip(b), let offset = GyroAidedHardIron.offset(after: stepWindow.suffix(50).map(\.sample), field: b, matrix: inForce.matrix) else { return nil }
        let moved = offset - inForce.offset
        let candidate = MagneticCalibration(offset: offset, matrix: inForce.matrix)
        let before = misfit ?? CalibrationMisfit(normPercent: 0, dipDegrees: 0, meanDip: dipReference ?? 0, meanNorm: field)
        let change = CalibrationChange(calibration: candidate, before: before, after: before, regions: 0,
                                       offsetMoved: moved.length, afterStep: true, fromGyroscope: true)
        let from = (b: b, before: inForce, misfit: misfit, east: frameFieldEast)
        putInForce(candidate, misfit: before)
        // Not provisional: the gyroscope's frame gives the hard iron better than a few directions' fit would.
        enterStep(solvedAgainst: from)
        return change
    }

    /// What a step does, whichever rule found it (the magnitude's in `add`, `followTheFrame`, `resolvedFromTheFrame`),
    /// once its calibration is in force (`putInForce` ends any learning): it is counted, told as the interference, and
    /// learnt afresh from here, the soft iron kept (the points cleared, a held fit dropped). `frame`: the field in the
    /// gyroscope's frame the step's hard iron was solved against, with the calibration before it (`stepFrame`; nil:
    /// not solved from the frame).
    private mutating func enterStep(solvedAgainst frame: StepFrame?) {
        steps += 1
        heldFit = nil
        stepFrame = frame
        interference = .step
        learning = true
        afterStep = true
        clearPoints()
    }

    /// Whether a candidate calibration's misfit `m` on a step's or a recall's latest samples explains them as the
    /// Earth's field: their spread `good`, their mean magnitude within half the magnitude threshold of `field`, and,
    /// given a `dip`, their mean dip within half the dip threshold of it. `resolvedFromTheFrame` gives one: the step's
    /// calibration it judges held those samples' magnitude or dip off.
    private func explainsAsEarthsField(_ m: CalibrationMisfit, field: Double, dip: Double?) -> Bool {
        Self.good(m, settings) && abs(m.meanNorm / field - 1) < settings.normDisturbance / 2
            && (dip.map { abs(m.meanDip - $0) < settings.dipDisturbance / 2 } ?? true)
    }

    /// Whether `b`, a field in the gyroscope's frame (`frameField`), lies at the Earth field's dip below the frame's
    /// horizontal: the dip the calibration in force measured on its points, else WMM's, within half the dip
    /// threshold (without either, it is taken as it is). One that does not was learnt while
    /// the frame's "up" was tilted (a car's own acceleration, with no speed to take it out), and its horizontal part
    /// carries the vertical field times that tilt: at 60° N (50 µT vertical, 15 µT horizontal) 5° of it is 4.4 µT, 16°
    /// of heading. A step's hard iron is not solved from it; the step's fits learn it as the vehicle turns (a simulated
    /// drive at 60° N: a field followed 7.0° off the dip put a hard iron 5.9 µT off horizontally in force, 14–18° of heading for
    /// ten minutes, `RoadDrivePlacesTests`).
    private func liesAtTheDip(_ b: Vector3) -> Bool {
        guard let dip = misfit?.meanDip ?? dipReference else { return true }
        return abs(Self.dip(b, Vector3(0, 0, 1)) - dip) <= settings.dipDisturbance / 2
    }

    /// At a step of the hard iron: its new value from the step's latest samples and the field in the gyroscope's
    /// frame from before it (`GyroAidedHardIron.offset(after:)`), the soft iron kept, in force at once when it
    /// explains those samples as the Earth's field, and better than the calibration in force does (their misfit: the
    /// spread of their magnitude and dip); the step's fits refine it as the board turns. A disturbance the magnitude
    /// alone found may be no step: a car turning into headings a young calibration's soft iron is wrong at looks like
    /// one, and a hard iron solved from the frame there moved 13 µT for a load of 2.4 µT (`RoadDriveTests.
    /// testAStrongIronDoesNotReachTheHeadingWithGNSS`, seed 8).
    private mutating func stepFromTheGyroscope(at time: Double) -> CalibrationChange? {
        guard let b = frameField, liesAtTheDip(b), let field else { return nil }
        let latest = pending.suffix(50).compactMap { GyroAidedHardIron.sample($0.raw, east: $0.east, up: $0.up, time: time) }
        guard latest.count >= 10, let o = GyroAidedHardIron.offset(after: latest, field: b, matrix: inForce.matrix) else { return nil }
        let candidate = MagneticCalibration(offset: o, matrix: inForce.matrix)
        let points = latest.map { Point(raw: $0.raw, up: $0.up, time: time) }
        let before = Self.misfit(inForce, points), after = Self.misfit(candidate, points)
        guard explainsAsEarthsField(after, field: field, dip: nil), after.total < before.total else { return nil }
        let change = CalibrationChange(calibration: candidate, before: before, after: after, regions: 0,
                                       offsetMoved: (o - inForce.offset).length, afterStep: true, fromGyroscope: true)
        putInForce(candidate, misfit: after)
        provisional = true
        return change
    }

    /// A cold start's hard iron from the gyroscope's attitude (`GyroAidedHardIron`), however large, once the board
    /// has turned about more than one axis, or, with WMM's field known, through a corner about the vertical alone
    /// (`solveLevel`); in force provisionally (the soft iron is left to the fits that follow).
    /// A solution is first held, then judged on the samples that come after it, which it did not see: it is put in
    /// force only if it predicts them (field fixed in the gyroscope's frame, its hard iron) better than the hard iron
    /// in force does with the best field for them. A fit that merely follows its own window's noise does not. A
    /// corner's solution with nothing in force is put in force at once and judged all the same (`unjudgedCorner`).
    private mutating func fitFromTheGyroscope(at time: Double) -> Outcome? {
        guard solvesCorners else { return nil }
        if let held = gyroHeld {
            let fresh = gyroAided.residual(field: held.solution.field, offset: held.solution.offset, after: held.time)
            guard fresh.count >= Self.gyroValidationSamples else { return nil }
            // A level solution is judged only by samples that turned (going straight, any hard iron with its own
            // field explains them), at the next corner, however long the straight before it (`gyroLevelHoldTime`).
            if held.solution.level, gyroAided.levelSpread(after: held.time) < Self.gyroLevelJudgeSpread {
                if time - held.time < Self.gyroLevelHoldTime { return nil }
                gyroHeld = nil
                return nil
            }
            gyroHeld = nil
            let now = gyroAided.residual(field: nil, offset: inForce.offset, after: held.time)
            let judged = unjudgedCorner
            unjudgedCorner = false
            if fresh.value <= Self.gyroMaximumResidual, fresh.value < settings.acceptRatio * now.value {
                return acceptFromTheGyroscope(held.solution)
            }
            if judged { return nil }
        }
        // For a strong hard iron only (a fifth of the field or more: a magnet beside the chip), where the point fits
        // come late or never; a weak one is left to them.
        // A vehicle that turns about its vertical only: the vertical field is WMM's, and a corner gives the rest.
        var solution = gyroAided.solve(minimumSpread: Self.gyroMinimumSpread)
        if solution == nil, settings.cornerStart, let norm = field, let dip = dipReference {
            solution = gyroAided.solveLevel(vertical: -norm * sin(dip * .pi / 180), minimumSpread: Self.gyroLevelMinimumSpread)
        }
        // A corner that would judge the one in force may find it again: it need not lie far from it. One that would
        // replace a corner's start must lie as far from it as a step of the hard iron (`cornerRefinement`).
        let apart = unjudgedCorner ? 0 : origin == .none ? 0.2 : Self.cornerRefinement
        guard let s = solution, s.residual <= Self.gyroMaximumResidual,
              (s.offset - inForce.offset).length >= apart * s.field.length else { return nil }
        gyroHeld = (s, time)
        // With nothing in force a corner's solution is in force at once: the raw field's heading is tens of degrees off
        // (a car's hard iron of tens of µT), and any solution that explains its own corner is nearer. The next corner
        // judges it as it would have judged the held solution (on the simulated drives without GNSS: from two minutes
        // 11.19° → 3.90° median, 41.00° → 7.70° worst).
        if s.level, origin == .none {
            let outcome = acceptFromTheGyroscope(s)
            if case .accepted = outcome { unjudgedCorner = true }
            return outcome
        }
        return nil
    }

    private mutating func acceptFromTheGyroscope(_ s: GyroAidedHardIron.Solution) -> Outcome? {
        let norm = s.field.length
        let scale = field.map { $0 / norm } ?? 1
        guard scale > 0.5 && scale < 2 else { return nil }
        let candidate = MagneticCalibration(offset: s.offset, matrix: Matrix3.identity * scale)
        let points = gyroAided.samples.map { Point(raw: $0.raw, up: $0.up, time: $0.time) }
        let old = Self.misfit(inForce, points), new = Self.misfit(candidate, points)
        guard Self.good(new, settings), new.total < settings.acceptRatio * old.total, old.total - new.total >= settings.acceptMargin else { return nil }
        let change = CalibrationChange(calibration: candidate, before: old, after: new, regions: points.count,
                                       offsetMoved: (s.offset - inForce.offset).length, afterStep: false, fromGyroscope: true)
        if field == nil { field = norm }
        putInForce(candidate, misfit: new)
        // Every sample is still learnt, and the first fit of the points replaces it on any real improvement.
        learning = true
        provisional = true
        fromTheGyroscope = true
        gyroAided.removeAll()
        return .accepted(change)
    }

    /// The least spread of rotations (`GyroAidedHardIron.Solution.spread`) a cold start's gyroscope-aided hard
    /// iron needs, and how often it is tried before anything is in force (it costs a 3×3 solve over ≤ 200 samples).
    static let gyroMinimumSpread = 0.05
    /// The most a gyroscope-aided solution may leave unexplained (RMS, fraction of the field): a field disturbed
    /// in places (a magnet nearby as the board moves) leaves 6–7 %; the judgement on later samples is the gate.
    static let gyroMaximumResidual = 0.15
    static let gyroInterval = 2.0
    /// A vehicle turning about its vertical only (`GyroAidedHardIron.solveLevel`, the vertical field WMM's): the
    /// least spread of the turn solved (0.15: a corner of about 80°, or a shorter one with straights either side), and
    /// of the turn that judges it (0.02: about 30°). On the simulated drives without GNSS a least spread of 0.05 and
    /// judging on samples that need not turn put a hard iron 13 µT off in force after the first corner (seed 1).
    static let gyroLevelMinimumSpread = 0.15
    static let gyroLevelJudgeSpread = 0.02
    /// How long a level solution waits for the next corner to judge it (s). It waited only as long as the solver's
    /// window (20 s) at first, and a car whose corners are further apart had every corner's solution lapse unjudged:
    /// a quiet IMU's drive without GNSS (`RoadDriveTests.testACornersHardIronWaitsForTheNextCorner`) had nothing in
    /// force until 796 s and its heading 108° off. The field in the gyroscope's frame holds over two minutes once its
    /// bias is learnt (0.005 °/s: 0.6°); a drift, or a load switched since, only makes a right solution look worse.
    /// On the simulated drives the next corner came within 120 s every time (300 and 600 s gave the same figures).
    static let gyroLevelHoldTime = 120.0
    /// Samples after a held solution that judge it (5 s at `sampleInterval`).
    static let gyroValidationSamples = 50

    /// Whether corners are solved (`fitFromTheGyroscope`): with nothing in force (a cold start), while the first
    /// corner's solution waits for the next to judge it, and on land while the calibration in force is still a corner's
    /// (`fromTheGyroscope`): until the points cover the 9 of 12 heading sectors a fit of a car's turn needs, the next
    /// corners are all that can correct it, each held and judged by the one after it as the first was. A car that keeps
    /// to a few headings (a motorway, a grid of streets) covers them late: on the simulated drives without GNSS, seed 4
    /// kept a first corner's hard iron 4.6 µT off for 400 s and its heading drifted to 12° off.
    private var solvesCorners: Bool { origin == .none || unjudgedCorner || (settings.cornerStart && fromTheGyroscope) }
    /// How far (a fraction of the field) a corner's solution must lie from the corner's hard iron in force to be held
    /// and judged: as far as a step of the hard iron found in the gyroscope's frame (`followTheFrame`, 4 %). Nearer,
    /// the fits of the points refine it.
    static let cornerRefinement = 0.04
    /// The most dip spread (degrees) a fit of a 3-D spread of directions may leave on its points, whatever the
    /// vehicle: half the disturbance threshold of a board whose "up" is good. On land the threshold is relaxed
    /// (`OnlineCalibrationSettings.forLand`) for a car's turn, whose "up" carries what is left of its own acceleration;
    /// a board that tumbles enough for a 3-D fit is in a hand or on a mount. Trial 07 with a 3.3 µT magnet
    /// (`BROADTrialTests.testTrial33sMagnetAtOtherDistances`): a fit of its first 24 directions left 4.8° and was put in
    /// force from the cold start, its soft iron 5 % off; 4.69° heading RMS against 1.12° with online calibration off.
    static let spreadFitDipSpread = 3.0

    /// Fits the points (aged ones dropped first) and puts the fit in force if it is clearly better.
    /// After a step only the hard iron is new: the soft iron in force stays, and fewer directions do. A soft iron with
    /// which no hard iron explains the step's points (the fit not good) was wrong before the step too, and holding it
    /// would refuse every fit from then on: the points are then fitted as any, the soft iron free (and the fit judged as
    /// any). A simulated drive of 45 minutes without GNSS (`RoadDriveTests.testLongDrives`, seed 7) took a step 10 µT off
    /// at 1214 s while its soft iron was 16 % anisotropic (1.15 on the board's x, 0.99 on its y); every fit of the hard
    /// iron alone was refused for the 570 s after it, the heading 2–20° off (11.18° over the drive, now 7.06°).
    public mutating func fit(at time: Double) -> Outcome {
        let afterAStep = afterStep && field != nil
        let outcome = fit(at: time, hardIronOnly: afterAStep)
        guard afterAStep, case .kept(_, let candidate) = outcome, !Self.good(candidate, settings) else { return outcome }
        switch fit(at: time, hardIronOnly: false) {
        case .notEnough, .failed: return outcome
        case let free: return free
        }
    }

    private mutating func fit(at time: Double, hardIronOnly: Bool) -> Outcome {
        lastFit = time
        for i in points.indices where points[i].map({ time - $0.time > settings.maximumAge }) == true { points[i] = nil }
        for i in ring.indices where ring[i].map({ time - $0.time > settings.maximumAge }) == true { ring[i] = nil }
        var current = points.compactMap { $0 }
        let turning = ring.compactMap { $0 }
        var turnOnly = false
        // The regions' points about a plane: a vehicle that turns level, or nearly (its directions a ring). Worked out
        // only where it is asked, from the regions' points (before the ring may take their place).
        let regions = current
        let aboutAPlane = { regions.count >= 4 && MagnetometerCalibrator.thinness(regions.map(\.raw)).value < Self.planarThinness }
        if hardIronOnly ? current.count < settings.minimumStepRegions : current.count < settings.minimumRegions {
            // Too few directions for a 3-D fit: a vehicle that only turns has the ring.
            guard turning.count >= settings.minimumTurnPoints else { return .notEnough(regions: current.count) }
            current = turning
            turnOnly = true
        } else if !hardIronOnly, turning.count >= settings.minimumTurnPoints, aboutAPlane() {
            // Directions enough, but in a plane: a vehicle that only turns and tilts a little (a car on hills,
            // its "up" tilted by what is left of its own acceleration). The vertical part of a 3-D fit would
            // follow that tilt; the ring, with WMM's dip, does not.
            current = turning
            turnOnly = true
        }
        // A turn's fit, where the gyroscope binned the ring, only once the vehicle has turned through more than half a
        // turn of heading (`minimumTurnedSectors`): the ring alone says so, before any fit is tried.
        if turnOnly && !ringBinnedByField && turnedSectors < Self.minimumTurnedSectors {
            return .notEnough(regions: current.count)
        }
        // A step's fit on the regions' points about a plane.
        let thinStep = hardIronOnly && !turnOnly && aboutAPlane()
        var options = MagnetometerCalibrator.Options(field: field)
        if hardIronOnly { options.model = .sphere }
        if let up = current.compactMap(\.up).first { options.down = -up }
        let candidate: CalibrationFit
        do { candidate = try MagnetometerCalibrator(options: options).fit(current.map(\.raw)) } catch {
            // A step's fit holds the soft iron: a sphere. Through points about a ring (a board that turns level) a sphere
            // has no one centre and the calibrator refuses it: the planar fit gives the horizontal hard iron, the vertical
            // the one in force (`aboutARing`). Refused for good, a level board's step was never ended: online calibration
            // stayed learning, judging nothing (`AttitudeFusionTests.testAStepOfTheHardIronOnALevelTurningBoardEnds`).
            // Only where the sphere is refused: tried first on all points about a plane, it moved the simulated drives
            // without GNSS both ways by up to 1.5° a seed (seeds 9–24 3.47° → 3.66°, 45 minutes 4.32° → 4.20°).
            var planar = options
            planar.model = nil
            guard thinStep, let fit = try? MagnetometerCalibrator(options: planar).fit(current.map(\.raw)) else {
                return .failed(error.message)
            }
            candidate = fit
        }
        // A turn must have gone round the hard iron, not merely through as many directions from the old one.
        if turnOnly && Self.headingSectors(current, offset: candidate.calibration.offset) < settings.minimumSectors {
            return .notEnough(regions: current.count)
        }
        // A planar fit scales to the horizontal field: the whole field's magnitude is the points' about the hard iron.
        let planar = candidate.model == .planar
        let scale = field ?? (planar ? current.reduce(0) { $0 + ($1.raw - candidate.calibration.offset).length } / Double(current.count) : candidate.field)
        // A turn gives the horizontal hard iron: its vertical part, and the soft iron, start from the calibration
        // in force, and the refinement (with WMM's dip, where known) finds the solution near them, not its
        // mirror image about the ring's plane.
        let o = candidate.calibration.offset
        let start: MagneticCalibration
        // So does a step's fit on points that lie near a ring (a car after a step: a sphere through a ring has two
        // centres, the second about twice the field's vertical away, the field upside down); a step's fit on the ring
        // itself (`turnOnly`) starts from the sphere's.
        let aboutARing = hardIronOnly ? thinStep : turnOnly || planar
        if aboutARing, let up = Self.meanUp(current) {
            let horizontal = o - up * o.dot(up), vertical = up * inForce.offset.dot(up)
            start = MagneticCalibration(offset: horizontal + vertical, matrix: inForce.matrix)
        } else if hardIronOnly {
            start = MagneticCalibration(offset: o, matrix: inForce.matrix)
        } else {
            start = candidate.calibration
        }
        // A ring of directions gives the horizontal soft iron only: a turn-only fit changes that part, a step's
        // fit none of it.
        let softIron: SoftIron = hardIronOnly ? .held : turnOnly || planar ? Self.meanUp(current).map { .horizontal(up: $0) } ?? .held : .full
        let dipWeight: Double
        if case .horizontal = softIron, !settings.turnTiltIsReal { dipWeight = OnlineCalibrationSettings.landDipWeight } else { dipWeight = 1 }
        let fitted = Self.refine(start, current, field: scale, wmmDip: dipReference, softIron: softIron, dipWeight: dipWeight)
        // A fit that mirrors or collapses the field (the points did not pin it) is no calibration.
        if let problem = OnlineCalibrationRecord.problem(fitted) { return .failed(problem) }
        let old = Self.misfit(inForce, current), new = Self.misfit(fitted, current)
        // The refinement may leave the ring: an arc about a far centre explains the points' magnitude as well as the
        // circle does (a car's ring, its points learnt under more than one state of its loads: a hard iron 62 µT
        // away, the turn in 3 of 12 sectors about it). The turn must go round the hard iron fitted, as round the first;
        // so must the plane of a planar fit of the regions' points (near the equator, 9 µT of vertical field: a fit
        // 31 µT off, its points in 4 sectors about it, `RoadDrivePlacesTests`).
        let aboutFit = turnOnly || planar ? Self.headingSectors(current, offset: fitted.offset) : 12
        if aboutFit < settings.minimumSectors { return .notEnough(regions: current.count) }
        let sectors = turnOnly ? aboutFit : 12
        // A fit of a 3-D spread of directions (not a turn's ring, nor a planar fit): its dip is held to
        // `spreadFitDipSpread`, and on part of the sphere it is partial (`partialFitRegions`).
        let spreadFit = !turnOnly && !planar
        // Better than the one in force, clearly, and good in itself: it explains its points within half the
        // disturbance thresholds (a fit that does not is no calibration, however much it improves).
        let relaxed = provisional || partialTurnSectors.map { sectors > $0 } == true
            || (spreadFit && partialFitRegions.map { 4 * current.count >= 5 * $0 } == true)
        let (ratio, margin) = relaxed ? (0.97, 0.02) : (settings.acceptRatio, settings.acceptMargin)
        // Judged as fitted: on land a turn's dip weighs less (`turnTiltIsReal`).
        let (oldTotal, newTotal) = (old.total(dipWeight: dipWeight), new.total(dipWeight: dipWeight))
        let better = newTotal < ratio * oldTotal && oldTotal - newTotal >= margin && Self.good(new, settings)
            && (!spreadFit || new.dipDegrees <= Self.spreadFitDipSpread)
        guard better else {
            misfit = old
            confirmInForce(old)
            return .kept(inForce: old, candidate: new)
        }
        // On land with GNSS the course judges it too, on epochs it never saw: a fit that explains the field's points
        // better but turns the heading away from the course (a hard iron chasing the street's field, or the car's
        // loads) is no better; one that brings the heading clearly closer to it needs no other judge.
        var courseBearsOut = false
        if let now = courseChecks.spread(inForce, at: time), let candidate = courseChecks.spread(fitted, at: time) {
            if candidate > now + settings.courseTolerance {
                misfit = old
                return .disagreesWithCourse(inForce: old, candidate: new, courseInForce: now, courseCandidate: candidate)
            }
            courseBearsOut = candidate < now - settings.courseTolerance
        }
        let change = CalibrationChange(calibration: fitted, before: old, after: new, regions: current.count,
                                       offsetMoved: (fitted.offset - inForce.offset).length, afterStep: afterStep)
        let held = HeldFit(change: change, time: time, dipWeight: dipWeight, field: scale,
                           provisional: hardIronOnly || (provisional && sectors < 12), partialTurnSectors: sectors < 12 ? sectors : nil,
                           partialFitRegions: spreadFit && !hardIronOnly && current.count < settings.fullFitRegions ? current.count : nil)
        // A good calibration in force (one that explains its points within half the disturbance thresholds), or a
        // start from the gyroscope (`fromTheGyroscope`), is replaced only by a fit that also explains the samples
        // after it better, which it did not see. So is the calibration in force after a step, where the samples come
        // in the gyroscope's frame: the step's fits have few directions, an arc where a field fixed in the world is
        // partly a hard iron (`OnlineCalibrationTests.testAStepsFitWaitsForSamplesItDidNotSee`), and the samples after
        // such a fit judge it by the field's wander in that frame. Without the frame they would judge it by the misfit
        // (a spread about the mean magnitude), which the calibration a step disproved may pass on the few directions
        // since. One that explains its points badly (nothing known yet) has nothing to protect: no wait.
        let framed = time - lastFramed <= settings.stepTime
        let unproven = (!Self.good(old, settings) && !fromTheGyroscope) || (hardIronOnly && !framed)
        if courseBearsOut || unproven || settings.validationSamples == 0 { return .accepted(take(held)) }
        heldFit = held
        fresh.removeAll(keepingCapacity: true)
        freshFramed.removeAll(keepingCapacity: true)
        return .held(inForce: old, candidate: new)
    }

    /// A fit held until the samples after it judge it, and what putting it in force then does.
    struct HeldFit {
        var change: CalibrationChange
        var time: Double
        var dipWeight: Double
        var field: Double
        var provisional: Bool
        var partialTurnSectors: Int?
        var partialFitRegions: Int?
    }

    private mutating func take(_ held: HeldFit) -> CalibrationChange {
        // The points stay: their regions were found from the old offset, close enough to keep them apart.
        if field == nil { field = held.field }
        putInForce(held.change.calibration, misfit: held.change.after)
        provisional = held.provisional
        partialTurnSectors = held.partialTurnSectors
        partialFitRegions = held.partialFitRegions
        return held.change
    }

    /// The held fit judged on the samples after it (`fresh`), once they are enough and turned through enough
    /// directions (4 of 12 heading sectors, or 4 direction regions): taken when it explains them better than the
    /// calibration in force (as it was fitted: with its dip weight), refused when not, or when `validationTime`
    /// passes without such samples. Returns the change when taken, and tells the outcome in `lastJudgement`.
    private mutating func judgeHeld(at time: Double) -> CalibrationChange? {
        guard let held = heldFit else { return nil }
        if time - held.time > settings.validationTime {
            heldFit = nil
            return nil
        }
        guard fresh.count >= settings.validationSamples else { return nil }
        let c = held.change.calibration
        guard Self.turned(fresh, about: c.offset) else { return nil }
        heldFit = nil
        let old = Self.misfit(inForce, fresh), new = Self.misfit(c, fresh)
        // With a gyroscope: the one whose field wanders less in the gyroscope's frame, and whose horizontal direction
        // there (the heading's own error) wanders less on clearly more samples (`validationHeadingZ`); without: the
        // misfit, as fitted.
        let better: Bool
        if freshFramed.count == fresh.count {
            let inForce = self.inForce
            better = GyroAidedHardIron.wander(freshFramed, c.apply) < settings.validationRatio * GyroAidedHardIron.wander(freshFramed, inForce.apply)
                && GyroAidedHardIron.headingWandersLess(freshFramed, candidate: c.apply, than: inForce.apply, by: settings.validationHeadingZ)
        } else {
            better = new.total(dipWeight: held.dipWeight) < old.total(dipWeight: held.dipWeight)
        }
        guard better else {
            lastJudgement = .refused(inForce: old, candidate: new)
            // The calibration in force explains samples the fit never saw better than the fit does.
            confirmInForce(old)
            return nil
        }
        lastJudgement = nil
        return take(held)
    }

    /// A fit not taken (not better on its points, or refused by the samples after it) leaves the calibration in
    /// force: when that explains them (`misfit`, within half the disturbance thresholds; after a step: the
    /// disturbance passed), learning ends and the disturbances are judged again. One that does not (nothing known
    /// yet, a bad fit) leaves it learning.
    private mutating func confirmInForce(_ misfit: CalibrationMisfit) {
        guard Self.good(misfit, settings) else { return }
        if field == nil { field = misfit.meanNorm }
        learning = false
        afterStep = false
    }

    /// The calibration that best explains the points' magnitude (`field`) and dip together, from `start`:
    /// Levenberg–Marquardt over the hard iron, the symmetric soft iron and the dip, with a weak pull towards
    /// `start`, so that what the attitude spread leaves undetermined (the vertical, for a vehicle that only
    /// turns) stays where the ellipsoid fit put it while the dip pins the rest.
    /// What of the soft iron a refinement may change: all of it (a 3-D spread), its horizontal part about
    /// `up` (a vehicle that only turns), or none (a step of the hard iron).
    enum SoftIron {
        case full, horizontal(up: Vector3), held
    }

    static func refine(_ start: MagneticCalibration, _ points: [Point], field: Double, wmmDip: Double? = nil, softIron: SoftIron = .full,
                       dipWeight: Double = 1) -> MagneticCalibration {
        guard points.contains(where: { $0.up != nil }), field > 0 else { return start }
        let m = start.matrix
        // p: the hard iron (3), the dip, then the soft iron's free terms: six matrix entries (full), or a, b, c, d, e
        // of (I + a e1e1ᵀ + b (e1e2ᵀ + e2e1ᵀ) + c e2e2ᵀ + d (e1upᵀ + up e1ᵀ) + e (e2upᵀ + up e2ᵀ)) · start
        // (horizontal), or none (held).
        var p0 = [start.offset.x, start.offset.y, start.offset.z, wmmDip ?? misfit(start, points).meanDip]
        switch softIron {
        case .full: p0 += [m.rows[0].x, m.rows[1].y, m.rows[2].z, m.rows[0].y, m.rows[0].z, m.rows[1].z]
        case .horizontal: p0 += [0, 0, 0, 0, 0]
        case .held: break
        }
        let basis: (Vector3, Vector3, Vector3)? = {
            guard case .horizontal(let up) = softIron else { return nil }
            let (e1, e2) = up.perpendicularBasis
            return (e1, e2, up)
        }()
        func calibration(_ p: [Double]) -> MagneticCalibration {
            let matrix: Matrix3
            switch softIron {
            case .full: matrix = Matrix3([p[4], p[7], p[8]], [p[7], p[5], p[9]], [p[8], p[9], p[6]])
            case .horizontal:
                let (e1, e2, up) = basis!
                func sym(_ a: Vector3, _ b: Vector3) -> Matrix3 { outer(a, b) + outer(b, a) }
                let s = outer(e1, e1) * p[4] + sym(e1, e2) * p[5] + outer(e2, e2) * p[6] + sym(e1, up) * p[7] + sym(e2, up) * p[8]
                matrix = (Matrix3.identity + s) * m
            case .held: matrix = m
            }
            return MagneticCalibration(offset: Vector3(p[0], p[1], p[2]), matrix: matrix)
        }
        // A turn's soft iron between the horizontal and the vertical (p[7], p[8]) turns the large vertical field
        // into the horizontal, as a hard iron would while level: only the tilt tells them apart. Where the tilt is
        // not real (a dip weight below 1, on land) a turn's fit holds them (0.005 costs as much as one point 1 % off).
        var holdsCrossTerms = false
        if case .horizontal = softIron, dipWeight < 1 { holdsCrossTerms = true }
        func residuals(_ p: [Double]) -> [Double] {
            let c = calibration(p)
            var r: [Double] = []
            r.reserveCapacity(2 * points.count + 10)
            for point in points {
                let f = c.apply(point.raw)
                r.append(100 * (f.length / field - 1))
                if let up = point.up { r.append(dipWeight * (dip(f, up) - p[3])) }
            }
            // The weak pull: 50 µT of hard iron, or 0.2 of soft iron, cost as much as one point 1 % off.
            for k in 0..<3 { r.append(0.02 * (p[k] - p0[k])) }
            for k in 4..<p.count { r.append((k >= 7 && holdsCrossTerms ? 200 : 5) * (p[k] - p0[k])) }
            // WMM's dip, where known: 2° off costs as much as one point 1 % off.
            if let wmmDip { r.append(0.5 * (p[3] - wmmDip)) }
            return r
        }
        func cost(_ r: [Double]) -> Double { r.reduce(0) { $0 + $1 * $1 } }
        var p = p0, r = residuals(p), c = cost(r), mu = 1e-3
        let steps = [Double](repeating: 1e-3 * field, count: 3) + [1e-3] + [Double](repeating: 1e-5, count: p0.count - 4)
        for _ in 0..<15 {
            // Forward-difference Jacobian, then (JᵀJ + μ diag) δ = −Jᵀr.
            let k = p.count
            var columns: [[Double]] = []
            for j in 0..<k {
                var q = p
                q[j] += steps[j]
                columns.append(zip(residuals(q), r).map { ($0 - $1) / steps[j] })
            }
            var a = DenseMatrix(rows: k, columns: k), g = DenseMatrix(rows: k, columns: 1)
            for i in 0..<k {
                g[i, 0] = -zip(columns[i], r).reduce(0) { $0 + $1.0 * $1.1 }
                for j in i..<k {
                    let v = zip(columns[i], columns[j]).reduce(0) { $0 + $1.0 * $1.1 }
                    a[i, j] = v
                    a[j, i] = v
                }
            }
            var improved = false
            for _ in 0..<6 {
                var damped = a
                for i in 0..<k { damped[i, i] += mu * max(a[i, i], 1e-9) }
                guard let delta = damped.solve(g) else { mu *= 10; continue }
                let q = (0..<k).map { p[$0] + delta[$0, 0] }
                let rq = residuals(q), cq = cost(rq)
                if cq.isFinite && cq < c {
                    improved = c - cq > 1e-9 * c
                    p = q; r = rq; c = cq
                    mu = max(mu / 10, 1e-9)
                    break
                }
                mu *= 10
            }
            if !improved { break }
        }
        return calibration(p)
    }

    /// "good", "fair" or "poor": the misfit, the field and dip against WMM's (`wmm`, when known) and interference
    /// together (Home Assistant's compass quality sensor); "uncalibrated" with nothing in force.
    public func quality(wmm: MagneticFieldReference?) -> String {
        guard origin != .none, let m = misfit else { return origin == .none ? "uncalibrated" : "unknown" }
        var worst = m.normPercent + m.dipDegrees
        if let wmm {
            worst = max(worst, abs(m.meanDip - wmm.dip))
            if let field, wmm.norm > 0 { worst = max(worst, 100 * abs(field / wmm.norm - 1) / 2) }
        }
        if interference != nil { worst = max(worst, 6) }
        return worst < 3 ? "good" : worst < 6 ? "fair" : "poor"
    }

    /// Points thinner than this (`MagnetometerCalibrator.thinness`) span a plane.
    static let planarThinness = MagnetometerCalibrator.planarThinness

    /// The points' mean "up", unit (nil: none known).
    static func meanUp(_ points: [Point]) -> Vector3? {
        let ups = points.compactMap(\.up)
        return ups.isEmpty ? nil : Vector3.mean(ups).normalized
    }

    /// Whether `points` turned enough to tell calibrations apart: through 4 direction regions about `offset`, or 4
    /// of 12 heading sectors. Going straight, any calibration holds the field still and explains it.
    static func turned(_ points: [Point], about offset: Vector3) -> Bool {
        Set(points.compactMap { SphereRegions.region(of: $0.raw - offset) }).count >= 4 || headingSectors(points, offset: offset) >= 4
    }

    /// Of 12 heading sectors, how many hold the horizontal part of a point's field (about the points' mean up).
    static func headingSectors(_ points: [Point], offset: Vector3) -> Int {
        let ups = points.compactMap(\.up)
        guard !ups.isEmpty else { return 0 }
        let up = Vector3.mean(ups).normalized
        let (e1, e2) = up.perpendicularBasis
        var sectors = Set<Int>()
        for p in points {
            let v = p.raw - offset
            let a = atan2(v.dot(e2), v.dot(e1)) * 180 / .pi + 180
            sectors.insert(min(11, Int(a / 30)))
        }
        return sectors.count
    }

    /// Whether a misfit is that of a calibration: within half the disturbance thresholds.
    static func good(_ m: CalibrationMisfit, _ settings: OnlineCalibrationSettings) -> Bool {
        m.normPercent <= 50 * settings.normDisturbance && m.dipDegrees <= settings.dipDisturbance / 2
    }

    /// How well `calibration` explains `points`.
    static func misfit(_ calibration: MagneticCalibration, _ points: [Point]) -> CalibrationMisfit {
        let fields = points.map { calibration.apply($0.raw) }
        let norms = fields.map(\.length)
        let mean = norms.reduce(0, +) / Double(max(1, norms.count))
        let normRMS = (norms.reduce(0) { $0 + square($1 / mean - 1) } / Double(max(1, norms.count))).squareRoot()
        let dips = zip(fields, points).compactMap { f, p in p.up.map { Self.dip(f, $0) } }
        var dipSpread = 0.0, meanDip = 0.0
        if !dips.isEmpty {
            meanDip = dips.reduce(0, +) / Double(dips.count)
            dipSpread = (dips.reduce(0) { $0 + square($1 - meanDip) } / Double(dips.count)).squareRoot()
        }
        return CalibrationMisfit(normPercent: 100 * normRMS, dipDegrees: dipSpread, meanDip: meanDip, meanNorm: mean)
    }

    /// Dip of `field` below the horizontal, degrees (down positive), with `up` the unit up in its frame.
    static func dip(_ field: Vector3, _ up: Vector3) -> Double {
        let n = field.length
        guard n > 0 else { return 0 }
        return -asin(max(-1, min(1, field.dot(up) / n))) * 180 / .pi
    }

    private static func square(_ x: Double) -> Double { x * x }
}

/// Compass health: what the CALIBRATION object says of online calibration.
public struct OnlineCalibrationState: Equatable, Sendable {
    public var mode: AutoCalibrationMode
    public var origin: CalibrationOrigin
    public var calibration: MagneticCalibration
    public var learning: Bool
    /// Direction regions holding a point (of 100), and the steps seen.
    public var regions: Int
    public var steps: Int
    /// The calibration in force judged on the points (nil: not yet).
    public var misfit: CalibrationMisfit?
    /// The field it expects (input units), and WMM's at the fix (nil: no fix and no fallback position).
    public var field: Double?
    public var wmm: MagneticFieldReference?
    /// WMM's magnitude at the fix where `field` holds (`OnlineMagnetometerCalibration.fieldWMM`; nil: no fix yet).
    public var fieldWMM: Double?
    /// Before any fix, WMM's magnitude at the fallback position the calibration in force was scaled to
    /// (`OnlineMagnetometerCalibration.fieldFallback`); nil once a fix holds, or where none was scaled.
    public var fieldFallback: Double?
    public var interference: Interference?
    /// The episode of interference that began or ended with this state (nil: it tells of none).
    public var episode: InterferenceEpisodes.Event?
    /// The episode of interference going on (nil: none). Its times, and the episode's, are on the fusion's own clock
    /// (`clockTime`), not the samples' stamps.
    public var ongoing: InterferenceEpisodes.Episode?
    /// When this state was taken (a change's sample time).
    public var time: GPSTimestamp
    /// When the calibration in force last changed (a change's sample time; nil: not since it was put in force, as the
    /// kept or manual one): an episode of interference is told at its own `time`, and changes nothing.
    public var changed: GPSTimestamp?
    /// `time` on the fusion's own clock, which a step of the samples' clock does not move (`AttitudeFusion`'s
    /// `SampleClock`): what the episodes of interference are timed on. `time`'s own seconds where no fusion keeps one.
    public var clockTime: Double
    /// Seconds the fusion's clock runs ahead of the samples' stamps at `clockTime` (`SampleClock.shift`: the steps of
    /// the samples' clock taken out); 0 where no fusion keeps one.
    public var clockShift = 0.0
    /// Seconds the episode going on has lasted at `clockTime` (nil: none).
    public var interferenceSeconds: Double? { ongoing?.seconds(at: clockTime) }
    /// When the episode going on began, in the samples' frame at `clockTime` (nil: none): from the episode itself, not
    /// from `time`, which a state brought up to now (`clockTime` moved on, `time` still the change's) keeps.
    public var interferenceSince: GPSTimestamp? { ongoing.map { GPSTimestamp(unixTime: $0.began - clockShift) } }
    /// "good", "fair" or "poor" (see `OnlineMagnetometerCalibration.quality(wmm:)`).
    public private(set) var quality: String

    public init(_ online: OnlineMagnetometerCalibration, mode: AutoCalibrationMode, time: GPSTimestamp, wmm: MagneticFieldReference?) {
        self.mode = mode
        origin = online.origin
        calibration = online.inForce
        learning = online.learning
        regions = online.regions
        steps = online.steps
        misfit = online.misfit
        field = online.field
        fieldWMM = online.fieldWMM
        fieldFallback = online.fieldFallback
        self.wmm = wmm
        interference = online.interference
        self.time = time
        clockTime = time.unixTime
        quality = online.quality(wmm: wmm)
    }

    /// The magnitude's RMS misfit in the field's units (µT).
    public var residual: Double? {
        guard let m = misfit else { return nil }
        return m.normPercent / 100 * m.meanNorm
    }

}
