import BearingAttitude
import BearingCalibration
import BearingModel
import BearingWire
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// `bearing attitude`'s workflow, out of the CLI: the attitude filter the daemon uses over a sample file
/// (`IMUSampleFile`), with online calibration from nothing known and, with a GNSS track, the deviation learnt
/// from driving on land or a GNSS swing for a boat. Each sample's attitude goes to `emit`; changes and progress
/// to `note`, as lines for the user.
public struct OfflineAttitude {
    public struct Options {
        public var axes: BodyAxes = .forwardLeftUp
        /// Degrees east to turn magnetic into true north; nil: 0, or WMM's at the track's first fix.
        public var declination: Double?
        /// Online calibration (false: the samples fused as they are).
        public var calibrate = true
        public var vehicle: Vehicle = .car
        public init() {}
    }

    /// One sample's attitude: its time, the quaternion turned to the north in force, and its angles.
    public struct Output {
        public var time: Double
        public var quaternion: Quaternion
        public var angles: AttitudeAngles
    }

    /// What the run leaves: the calibration learnt (nil: off), a boat's swing over the track, the deviation
    /// from driving at the end (on land, with a track).
    public struct Outcome {
        public var calibration: OnlineMagnetometerCalibration?
        public var swing: Result<SwingResult, SwingError>?
        public var driving: String?
    }

    /// Refuses a file whose magnetometer is not in µT when online calibration needs it (nil: fine).
    public static func unitProblem(_ file: IMUSampleFile, source: String, options: Options) -> String? {
        guard options.calibrate, let problem = file.magnetometerUnitProblem(source: source) else { return nil }
        return "\(problem.description); online calibration compares the field with WMM's in µT (--calibration off takes any unit)"
    }

    public static func run(_ file: IMUSampleFile, track: GNSSTrackFile?, options: Options, now: Double,
                           note: @escaping (String) -> Void, emit: (Output) throws -> Void) rethrows -> Outcome {
        let axes = options.axes
        var declination = options.declination ?? 0
        // Without a gyroscope the samples' zero rates leave the strapdown still: an accelerometer-tilted compass.
        let vehicle = options.vehicle
        var online = !options.calibrate ? nil : OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: vehicle.learnsFromDriving ? .forLand : OnlineCalibrationSettings())
        // The first fix: WMM's declination (true north, unless given) and its field for the calibration.
        if let first = track?.epochs.first {
            let year = WorldMagneticModel.decimalYear(unixSeconds: now)
            let field = WorldMagneticModel.wmm2025.field(latitude: first.latitude, longitude: first.longitude, heightKm: 0, year: year)
            if options.declination == nil { declination = field.declination }
            online?.expect(field: field.totalIntensity / 1000, dip: field.inclination)
        }
        var filter = OnlineCalibratedFilter(filter: AttitudeFilter(parameters: file.hasGyroscope ? AttitudeFilterParameters() : .withoutGyroscope),
                                            calibration: online, hasGyroscope: file.hasGyroscope)
        var driving = DrivingDeviation(epochs: track?.epochs ?? [], vehicle: vehicle, variation: declination, note: note)
        for i in file.samples.indices {
            let dt = AttitudeFilter.replayInterval(file.samples, i)
            let s = driving.compensated(file.samples[i], filter: filter.filter)
            filter.update(s, dt: dt)
            for (time, outcome) in filter.takeOutcomes() {
                if case .accepted(let change) = outcome {
                    note("t \(JSONObjectWriter.shortest(time)) s: \(change.summary)\n")
                    if change.turnsTheHeading { driving.calibrationChanged(at: time) }
                }
            }
            let compass = AttitudeAngles(filter.filter.quaternion, body: axes).heading
            driving.step(s, filter: &filter, compass: compass)
            let q = filter.filter.quaternion
            let turn = declination + driving.deviation(at: compass)
            let oriented = turn == 0 ? q : q.trueNorth(declination: turn)
            try emit(Output(time: file.samples[i].time, quaternion: oriented, angles: AttitudeAngles(oriented, body: axes)))
        }
        let (swing, drivingText) = driving.finish()
        return Outcome(calibration: filter.calibration, swing: swing, driving: drivingText)
    }

    /// What `online` learnt, as the daemon keeps it (calibration.auto_file's format), stamped `time`; nil
    /// when nothing was learnt.
    public static func record(_ online: OnlineMagnetometerCalibration, time: GPSTimestamp) -> [UInt8]? {
        guard online.origin == .auto else { return nil }
        let state = OnlineCalibrationState(online, mode: .track, time: time, wmm: nil)
        return Array(OnlineCalibrationRecord(state: state, chip: nil, baseline: nil, time: time.iso8601).encoded())
    }
}

/// `--gnss`: the track's epochs, as the samples reach them, into the deviation from driving on land
/// (`PassiveDeviation`, as the daemon's fusion stage learns it; its curve corrects the headings from then on),
/// or for a boat into a GNSS swing (`SwingCollector`, as `bearing swing` runs it), solved at the end with the
/// current, from 60 s after the last calibration change that turned the heading. On land the epochs' speeds
/// also take the vehicle's own acceleration out of the accelerometer (`VehicleAcceleration`), as the daemon does.
struct DrivingDeviation {
    let epochs: [GNSSTrackFile.Epoch]
    let passive: Bool
    let variation: Double
    var next = 0
    var nextSpeed = 0
    var motion = VehicleAcceleration()
    var deviation = PassiveDeviation()
    var told: Int?
    var swing: SwingCollector?
    var swingFrom = -Double.infinity
    let note: (String) -> Void

    init(epochs: [GNSSTrackFile.Epoch], vehicle: Vehicle, variation: Double, note: @escaping (String) -> Void) {
        self.epochs = epochs
        self.note = note
        passive = vehicle.learnsFromDriving && !epochs.isEmpty
        self.variation = variation
        if !vehicle.learnsFromDriving && !epochs.isEmpty {
            swing = SwingCollector()
            note("--vehicle boat: in a current the course over ground is not the heading; the track is solved as a GNSS swing, with the current, at the end (bearing swing applies one)\n")
        }
    }

    /// The sample with the vehicle's acceleration (on land, from the epochs it has reached) taken out.
    mutating func compensated(_ s: IMUSample, filter: AttitudeFilter) -> IMUSample {
        guard passive else { return s }
        while nextSpeed < epochs.count, epochs[nextSpeed].time <= s.time {
            let e = epochs[nextSpeed]
            nextSpeed += 1
            if let speed = e.speed { motion.epoch(speed: speed, fixTime: e.time, arrival: e.time) }
        }
        var out = s
        out.accelerometer = s.accelerometer - motion.acceleration(at: s.time, angularRate: s.gyroscope - filter.gyroBias)
        return out
    }

    /// After one sample: the epochs it has reached (a swing also takes its rate of turn).
    /// On land an epoch going straight at speed also goes to a course-aided start of the calibration.
    mutating func step(_ s: IMUSample, filter online: inout OnlineCalibratedFilter, compass: Double) {
        guard passive || swing != nil else { return }
        // The filter's values are read where they are needed: a copy of the whole filter every sample would cost.
        if swing != nil {
            let rate = online.filter.headingRate(s.gyroscope)
            swing?.attitude(time: s.time, compassHeading: compass, rateOfTurn: rate * 180 / .pi, variation: variation)
        }
        while next < epochs.count, epochs[next].time <= s.time {
            let e = epochs[next]
            next += 1
            guard let speed = e.speed, let track = e.track else { continue }
            if swing != nil {
                if e.time >= swingFrom { swing?.epoch(time: e.time, speed: speed, track: track, eph: nil, eps: e.eps) }
                continue
            }
            let taken = deviation.epoch(time: e.time, compass: compass, gyroHeading: AttitudeAngles.heading(online.filter.quaternion6D), track: track,
                                        speed: speed, eps: e.eps, variation: variation)
            if deviation.straight { online.course(track, declination: variation, time: e.time) }
            guard taken else { continue }
            let level = deviation.curve == nil ? 0 : deviation.sectorsCovered >= deviation.settings.minimumSectors ? 2 : 1
            if level != (told ?? 0) {
                told = level
                note("t \(JSONObjectWriter.shortest(e.time)) s: deviation from driving: \(describe())\n")
            }
        }
    }

    /// The deviation to add at compass heading `compass`.
    func deviation(at compass: Double) -> Double { deviation.deviation(atCompassHeading: compass) ?? 0 }

    /// A new magnetometer calibration: the deviation left over is another.
    mutating func calibrationChanged(at time: Double) {
        deviation.restart(at: time)
        told = nil
        if swing != nil {
            swing = SwingCollector()
            swingFrom = time + 60
        }
    }

    func describe() -> String {
        guard let c = deviation.curve else { return "none yet" }
        let terms = zip(DeviationCurve.names, c.coefficients).map { String(printf: "%@ %.2f°", $0, $1) }.joined(separator: ", ")
        return "\(terms) (\(deviation.sectorsCovered) of 12 sectors; \(deviation.taken) epochs taken, \(deviation.setAside) set aside)"
    }

    /// The swing over the track, solved (a boat's), and the deviation from driving at the end (on land).
    func finish() -> (swing: Result<SwingResult, SwingError>?, driving: String?) {
        var solved: Result<SwingResult, SwingError>?
        if let swing {
            do throws(SwingError) { solved = .success(try swing.solve()) } catch { solved = .failure(error) }
        }
        return (solved, passive ? describe() : nil)
    }
}
