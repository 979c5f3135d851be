import BearingAttitude
import BearingCalibration
import BearingOnlineCalibration
import BearingModel
import BearingWire
import BearingPOSIX
import BearingCompass
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `bearing attitude`'s workflow, out of the CLI: the daemon's own fusion stage (`FusionStage`, the
/// `AttitudeFusion` the daemon runs with `calibration.auto: track`) over a sample file (`IMUSampleFile`), fed
/// as the daemon is fed: each row's field sample, then its inertial sample, at the row's time; with a GNSS
/// track, each epoch as a fix once the samples reach it, with the WMM field at it (`WMMStage`), so a land
/// vehicle learns its deviation from driving and takes its acceleration out of the accelerometer exactly as the
/// daemon does. A boat's track is solved as a GNSS swing at the end (`SwingCollector`, as `bearing swing`
/// runs it). Each sample's attitude goes to `emit`; changes and progress to `note`, as lines for the user.
public struct OfflineAttitude {
    public struct Options {
        public var axes: BodyAxes = .forwardLeftUp
        /// Degrees east to turn magnetic into true north, in place of WMM's; nil: WMM's at the track's fix
        /// (or at `position`), else magnetic north.
        public var declination: Double?
        /// Latitude, longitude (degrees) and height (km) of the board: the daemon's `heading.fallback_position`,
        /// the WMM field there until the track's first fix.
        public var position: Vector3?
        /// Online calibration (false: the samples fused as they are).
        public var calibrate = true
        public var vehicle: Vehicle = .car
        public init() {}
    }

    /// One sample's attitude: its time, the quaternion turned to the north in force, and its angles; the
    /// daemon's ATT for it (board axes x forward, y right, z down), nil while the fusion has none (before
    /// the first field sample, or a file without a magnetometer: then the filter's orientation is given).
    public struct Output {
        public var time: Double
        public var quaternion: Quaternion
        public var angles: AttitudeAngles
        public var attitude: Attitude?
    }

    /// What the run leaves: the calibration learnt (nil: off), a boat's swing over the track, the deviation
    /// from driving at the end (on land, with a track).
    public struct Outcome {
        public var calibration: OnlineMagnetometerCalibration?
        public var swing: Result<SwingResult, SwingError>?
        public var driving: String?
    }

    /// One row of the file as the daemon's sensors would give it: its field sample (nil when the row has none)
    /// and its inertial sample (without an angular rate when the file has no gyroscope), stamped `base` + t.
    public struct Row: Sendable {
        public var magnetic: MagneticSample?
        public var inertial: InertialSample
    }

    /// The device name the file's samples carry (their chip is the `# bearing-samples` line's, else "file").
    static let device = "file"

    /// The rows of `file` as sensor samples, times shifted by `base` whole seconds (the WMM's date is the
    /// samples' date: a file's clock usually starts at 0).
    public static func rows(_ file: IMUSampleFile, base: Int64) -> [Row] {
        let chip = file.metadata["chip"] ?? "file"
        return file.samples.map { s in
            let t = stamp(s.time, base: base)
            let magnetic = s.magnetometer.map { MagneticSample(time: t, device: device, chip: chip, field: $0) }
            return Row(magnetic: magnetic, inertial: InertialSample(time: t, device: device, chip: chip, acceleration: s.accelerometer,
                                                                    angularRate: file.hasGyroscope ? s.gyroscope : nil))
        }
    }

    /// `base` whole seconds plus `t` seconds, to the nanosecond.
    static func stamp(_ t: Double, base: Int64) -> GPSTimestamp {
        let whole = t.rounded(.down)
        var seconds = base + Int64(whole), nanoseconds = Int32(((t - whole) * 1e9).rounded())
        if nanoseconds >= 1_000_000_000 { seconds += 1; nanoseconds -= 1_000_000_000 }
        return GPSTimestamp(seconds: seconds, nanoseconds: nanoseconds)
    }

    /// A track epoch as gpsd's fix (2D, its time on the samples' clock).
    public static func fix(_ e: GNSSTrackFile.Epoch, base: Int64) -> GPSFix {
        var f = GPSFix(mode: .twoD, time: stamp(e.time, base: base), latitude: e.latitude, longitude: e.longitude)
        f.speed = e.speed
        f.track = e.track
        f.eps = e.eps
        return f
    }

    /// A track whose turns are not the samples' (`TrackClock.Decision.refuse`): what was wrong, naming the file.
    public struct TrackRefused: Error, CustomStringConvertible {
        public var description: String
    }

    /// The track on the samples' clock, and what to tell about it: shifted by `offset` when one is given (nothing to
    /// tell), else as `TrackClock` decides from the turns both recorded.
    public static func onSamplesClock(_ track: GNSSTrackFile, source: String, file: IMUSampleFile,
                                      offset: Double?) throws(TrackRefused) -> (track: GNSSTrackFile, note: String?) {
        if let offset { return (track.shifted(by: offset), nil) }
        guard let span = track.span, let first = file.samples.first?.time, let last = file.samples.last?.time else { return (track, nil) }
        let clock = TrackClock(samples: file.samples, hasGyroscope: file.hasGyroscope, epochs: track.epochs,
                               positionNoise: track.positionNoise)
        switch clock.decision(source: source, track: span, samples: first...last) {
        case .asGiven(let note): return (track, note)
        case .shift(let offset, let note): return (track.shifted(by: offset), note)
        case .refuse(let message): throw TrackRefused(description: message)
        }
    }

    /// The file's axes in the daemon's board frame (x forward, y right, z down): the orientation both sensors
    /// are given, and the same turn as a quaternion, which gives the daemon's quaternion back in the file's axes.
    static func frame(_ axes: BodyAxes) -> (orientation: Orientation, turn: Quaternion) {
        switch axes {
        case .forwardRightDown: return (.identity, .identity)
        case .forwardLeftUp: return (try! Orientation(axes: "+X-Y-Z"), Quaternion(w: 0, x: 1, y: 0, z: 0)) // 180° about x
        }
    }

    /// The file's axes → the daemon's board frame.
    public static func orientation(_ axes: BodyAxes) -> Orientation { frame(axes).orientation }

    /// Refuses a file whose magnetometer is not in µT when online calibration needs it (nil: fine).
    public static func unitProblem(_ file: IMUSampleFile, source: String, options: Options) -> String? {
        guard options.calibrate, let problem = file.magnetometerUnitProblem(source: source) else { return nil }
        return "\(problem.description); online calibration compares the field with WMM's in µT (--calibration off takes any unit)"
    }

    public static func run(_ file: IMUSampleFile, track: GNSSTrackFile?, options: Options, now: Double,
                           note: @escaping (String) -> Void, emit: (Output) throws -> Void) rethrows -> Outcome {
        let base = Int64(now.rounded(.down))
        let (toBoard, fromFile) = frame(options.axes)
        let given = options.declination
        // The daemon's fusion stage: the vehicle's online calibration (or none), both sensors in the file's axes.
        var fusion = AttitudeFusion(imuOrientation: toBoard, magnetometerOrientation: toBoard, trueNorth: true,
                                    auto: options.calibrate ? .track : .off, vehicle: options.vehicle)
        let changes = ChangeLog()
        fusion.onOnlineEvent = { change, state in if let change { changes.entries.withLock { $0.append((state.time, change)) } } }
        var stage = FusionStage(fusion)
        // The daemon's fallback position's field, on the samples' date.
        let fallback = options.position.map { override(LocalField.fallback($0, unixSeconds: Double(base)), given) }
        var field = WMMStage<LocalField?>.localFields(model: .wmm2025, fallback: fallback)
        stage.start(calibration: nil, localField: field.current)
        let epochs = track?.epochs ?? []
        let learnsFromDriving = options.vehicle.learnsFromDriving
        var progress = Progress(epochs: epochs, vehicle: options.vehicle, note: note)
        var next = 0
        for (i, row) in rows(file, base: base).enumerated() {
            let t = file.samples[i].time
            while next < epochs.count, epochs[next].time <= t {
                let e = epochs[next]
                next += 1
                var taken = field
                if stage.take(fix(e, base: base), field: &taken, learnsFromDriving: learnsFromDriving), given != nil {
                    // The declination given replaces WMM's: the field as it came, then with it.
                    _ = stage.step(.localField(taken.current.map { override($0, given) }))
                }
                field = taken
                progress.epoch(e, stage: stage)
            }
            if let m = row.magnetic { _ = stage.step(.magnetic(m)) }
            let attitude = stage.step(.inertial(row.inertial))
            for c in changes.entries.withLock({ c in defer { c = [] }; return c }) {
                note("t \(JSONObjectWriter.shortest(c.time.unixTime - Double(base))) s: \(c.change.summary)\n")
                if c.change.turnsTheHeading { progress.calibrationChanged(at: c.time.unixTime - Double(base)) }
            }
            var q: Quaternion
            if let a = attitude, let aq = a.quaternion {
                // A declination given with no field to carry it (no track, no position) turns it here.
                q = a.declination == nil ? given.map { aq.trueNorth(declination: $0) } ?? aq : aq
            } else {
                q = stage.fusion.filter.quaternion
                if let d = given ?? field.current?.declination.value { q = q.trueNorth(declination: d) }
            }
            progress.sample(file.samples[i], board: toBoard.matrix, stage: stage, variation: given ?? field.current?.declination.value ?? 0)
            let oriented = q * fromFile
            try emit(Output(time: t, quaternion: oriented, angles: AttitudeAngles(oriented, body: options.axes), attitude: attitude))
        }
        let swing = progress.finish()
        return Outcome(calibration: stage.fusion.online, swing: swing,
                       driving: learnsFromDriving && !epochs.isEmpty ? Progress.describe(stage.fusion.driving) : nil)
    }

    /// The calibration changes the fusion told of since they were last taken. A class holding the `Mutex`, so that the
    /// fusion's escaping closure captures a reference: a noncopyable `Mutex` in a local, captured by an escaping closure,
    /// is the one such capture this code had, and the suspect of a crash seen twice in `OfflineAttitudeTests` (a bad
    /// pointer printing a value that should have been nil), never reproduced on demand.
    final class ChangeLog: Sendable {
        let entries = Mutex<[(time: GPSTimestamp, change: CalibrationChange)]>([])
    }

    /// `field` with the declination given in place of WMM's (nil: as it is).
    static func override(_ field: LocalField, _ declination: Double?) -> LocalField {
        guard let declination else { return field }
        var f = field
        f.declination = Declination(declination, field.declination.source)
        return f
    }

    /// What the daemon keeps of `online` (calibration.auto_file's format), stamped `time`; nil when nothing
    /// was learnt.
    public static func record(_ online: OnlineMagnetometerCalibration, time: GPSTimestamp) -> [UInt8]? {
        guard online.origin == .auto else { return nil }
        let state = OnlineCalibrationState(online, mode: .track, time: time, wmm: nil)
        return Array(OnlineCalibrationRecord(state: state, chip: nil, sensor: nil, baseline: nil, time: time.iso8601).encoded())
    }
}

/// What `bearing attitude` tells beside the attitudes: on land the deviation from driving as it is learnt (the
/// fusion stage learns it), and for a boat the GNSS swing (`SwingCollector`, as `bearing swing` runs it), solved at
/// the end with the current, from 60 s after the last calibration change that turned the heading.
struct Progress {
    let note: (String) -> Void
    var swing: SwingCollector?
    var swingFrom = -Double.infinity
    var told: Int?

    init(epochs: [GNSSTrackFile.Epoch], vehicle: Vehicle, note: @escaping (String) -> Void) {
        self.note = note
        if !vehicle.learnsFromDriving && !epochs.isEmpty {
            swing = SwingCollector()
            note("--vehicle boat: in a current the course over ground is not the heading; the track is solved as a GNSS swing, with the current, at the end (bearing swing applies one)\n")
        }
    }

    /// After an epoch reached the fusion: a boat's swing takes it; on land, the deviation's progress is told
    /// when it changes.
    mutating func epoch(_ e: GNSSTrackFile.Epoch, stage: FusionStage) {
        if swing != nil {
            if e.time >= swingFrom, let speed = e.speed, let track = e.track {
                swing?.epoch(time: e.time, speed: speed, track: track, eph: nil, eps: e.eps)
            }
            return
        }
        guard let driving = stage.fusion.driving else { return }
        let level = driving.curve == nil ? 0 : driving.sectorsCovered >= driving.settings.minimumSectors ? 2 : 1
        if driving.taken > 0, level != (told ?? 0) {
            told = level
            note("t \(JSONObjectWriter.shortest(e.time)) s: deviation from driving: \(Self.describe(driving))\n")
        }
    }

    /// After a sample: a boat's swing takes the compass heading (before deviation) and the rate of turn.
    mutating func sample(_ s: IMUSample, board: Matrix3, stage: FusionStage, variation: Double) {
        guard swing != nil else { return }
        let filter = stage.fusion.filter
        let compass = AttitudeAngles(filter.quaternion, body: .forwardRightDown).heading
        swing?.attitude(time: s.time, compassHeading: compass, rateOfTurn: filter.headingRate(board * s.gyroscope) * 180 / .pi,
                        variation: variation)
    }

    /// A new magnetometer calibration: a swing starts again a minute later (the fusion restarts the deviation).
    mutating func calibrationChanged(at time: Double) {
        told = nil
        if swing != nil {
            swing = SwingCollector()
            swingFrom = time + 60
        }
    }

    static func describe(_ deviation: PassiveDeviation?) -> String {
        guard let deviation, let c = deviation.curve else { return "none yet" }
        let terms = zip(DeviationCurve.names, c.coefficients).map { String(printf: "%@ %.2f°", $0, $1) }.joined(separator: ", ")
        return "\(terms) (\(deviation.sectorsCovered) of 12 sectors; \(deviation.taken) epochs taken, \(deviation.setAside) set aside)"
    }

    /// The swing over the track, solved (a boat's).
    func finish() -> Result<SwingResult, SwingError>? {
        guard let swing else { return nil }
        do throws(SwingError) { return .success(try swing.solve()) } catch { return .failure(error) }
    }
}
