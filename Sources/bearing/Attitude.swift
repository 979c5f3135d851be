import BearingWire
import ArgumentParser
import BearingDaemon
import BearingSensors
import BearingCalibration
import BearingAttitude
import BearingModel
import BearingPOSIX
import BearingPublishing
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct AttitudeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attitude",
        abstract: "Orientation from a recording of gyroscope, accelerometer and magnetometer samples.",
        discussion: """
            Runs the attitude filter the daemon uses (VQF's method, default parameters) over the samples of \
            FILE and writes one line per sample: the quaternion that rotates sensor-frame vectors into \
            east-north-up, and heading (clockwise from north, of the sensor's +x axis), pitch (+x up positive) \
            and roll (right side down positive), in degrees. North is magnetic unless --declination or \
            --position is given; then heading and quaternion are turned to true north. Without mag columns \
            the heading is only relative to the start (6D). Without gyr columns (an accelerometer and a \
            magnetometer, such as an LSM303) the filter runs as the daemon's tilt-compensated compass \
            without a gyroscope (1 s time constants). FILE is CSV with a header naming the columns \
            t,acc_x,acc_y,acc_z, optionally gyr_x,gyr_y,gyr_z and mag_x,mag_y,mag_z, in any order, in s, \
            m/s² (specific force, up at rest), rad/s and µT. Bad input exits with status 2 and names the \
            line and column. The magnetometer is calibrated online as the daemon does with calibration.auto \
            track, from nothing known (--calibration off fuses the samples as they are); each change of the \
            calibration is told on standard error.
            """)

    @Option(help: ArgumentHelp("The recording (CSV, see above).", valueName: "file")) var samples: String
    @Flag(help: "One JSON object per sample: t, quat_enu [w,x,y,z], heading, roll, pitch (else CSV lines).") var json = false
    // Unconditional: the value may start with a minus (west, south).
    @Option(parsing: .unconditional, help: "Declination in degrees, east positive: reference heading and quaternion to true north.") var declination: Double?
    @Option(parsing: .unconditional, help: "Latitude,longitude[,height km]: the declination from the embedded WMM there, today.") var position: String?
    @Option(help: "The sensor axes: flu (x forward, y left, z up) or frd (x forward, y right, z down).") var body: String = BodyAxes.forwardLeftUp.rawValue
    @Option(help: "Online magnetometer calibration: track (learn hard and soft iron as the samples go) or off.") var calibration: String = "track"
    @Option(help: ArgumentHelp("GNSS epochs on the samples' clock (CSV: t,lat,lon[,speed,track,eps]: s, degrees, m/s, degrees true, m/s): WMM at the first "
        + "fix (true north, the field for calibration) and, for a land vehicle, the deviation learnt from driving.", valueName: "file")) var gnss: String?
    @Option(help: ArgumentHelp("Write the online calibration in force at the end to FILE, as the daemon keeps it "
        + "(calibration.auto_file's format; the daemon can start from it), atomically.", valueName: "file")) var saveCalibration: String?
    @Option(help: "car, rover or boat: on land the course over ground at speed is the heading (no current), and with --gnss the speed takes the vehicle's acceleration out of the accelerometer and the first straight epochs give the hard iron; a boat's track is solved as a GNSS swing, with the current, at the end.") var vehicle: String = "car"

    func validate() throws {
        if declination != nil && position != nil { throw ValidationError("give --declination or --position, not both") }
        if let declination, !(declination.isFinite && abs(declination) <= 180) {
            throw ValidationError("--declination \(declination): degrees within -180…180, east positive")
        }
        if let position, Calibrate.parsePosition(position) == nil {
            throw ValidationError("--position \(position): expected latitude,longitude[,height km], e.g. 52.1,4.3 or -33.9,151.2,0.05")
        }
        if Self.vehicles[vehicle] == nil {
            throw ValidationError("--vehicle \(vehicle): allowed: car, rover, boat")
        }
        if !["track", "off"].contains(calibration) {
            throw ValidationError("--calibration \(calibration): allowed: track, off")
        }
        if saveCalibration != nil && calibration == "off" {
            throw ValidationError("--save-calibration needs --calibration track: with calibration off nothing is learnt")
        }
        if BodyAxes(rawValue: body) == nil {
            throw ValidationError("--body \(body): allowed: \(BodyAxes.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// The vehicles `--vehicle` takes (a board on no vehicle is the daemon's `none`: here a car is the default).
    static let vehicles: [String: Vehicle] = ["car": .car, "rover": .rover, "boat": .boat]

    /// Degrees east to turn magnetic into true north, 0 when neither option is given.
    func trueNorthDeclination() -> Double {
        if let declination { return declination }
        guard let p = position.flatMap(Calibrate.parsePosition) else { return 0 }
        let year = WorldMagneticModel.decimalYear(unixSeconds: Date().timeIntervalSince1970)
        return WorldMagneticModel.wmm2025.field(latitude: p.x, longitude: p.y, heightKm: p.z, year: year).declination
    }

    func run() throws {
        Syscall.ignoreSIGPIPE()
        let file: IMUSampleFile
        do {
            file = try IMUSampleFile.parse(try AtomicFile.readText(samples, limit: AtomicFile.recordingLimit), source: samples, requireGyroscope: false)
        } catch let e as IMUSampleFileError {
            throw Self.badInput(e.description)
        } catch {
            throw Self.badInput("\(samples): cannot be read: \(error)")
        }
        let axes = BodyAxes(rawValue: body) ?? .forwardLeftUp
        var declination = trueNorthDeclination()
        var track: GNSSTrackFile?
        if let gnss {
            do {
                track = try GNSSTrackFile.parse(try AtomicFile.readText(gnss, limit: AtomicFile.recordingLimit), source: gnss)
            } catch let e as IMUSampleFileError {
                throw Self.badInput(e.description)
            } catch {
                throw Self.badInput("\(gnss): cannot be read: \(error)")
            }
        }
        var output = StreamedOutput()
        if !json { output.append("t,qw,qx,qy,qz,heading,pitch,roll\n") }

        guard file.hasGyroscope || file.hasMagnetometer else {
            throw Self.badInput("\(samples): neither gyr_x,gyr_y,gyr_z nor mag_x,mag_y,mag_z columns: an accelerometer alone gives no attitude to follow")
        }
        // Without a gyroscope the samples' zero rates leave the strapdown still: an accelerometer-tilted compass.
        let vehicle = Self.vehicles[self.vehicle] ?? .car
        if calibration != "off", let problem = file.magnetometerUnitProblem(source: samples) {
            throw Self.badInput("\(problem.description); online calibration compares the field with WMM's in µT (--calibration off takes any unit)")
        }
        var online = calibration == "off" ? nil : OnlineMagnetometerCalibration(calibration: nil, origin: .none, settings: vehicle.learnsFromDriving ? .forLand : OnlineCalibrationSettings())
        // The first fix: WMM's declination (true north, unless given) and its field for the calibration.
        if let first = track?.epochs.first {
            let year = WorldMagneticModel.decimalYear(unixSeconds: Date().timeIntervalSince1970)
            let field = WorldMagneticModel.wmm2025.field(latitude: first.latitude, longitude: first.longitude, heightKm: 0, year: year)
            if self.declination == nil && position == nil { declination = field.declination }
            online?.expect(field: field.totalIntensity / 1000, dip: field.inclination)
        }
        var filter = OnlineCalibratedFilter(filter: AttitudeFilter(parameters: file.hasGyroscope ? AttitudeFilterParameters() : .withoutGyroscope),
                                            calibration: online, hasGyroscope: file.hasGyroscope)
        var driving = DrivingDeviation(epochs: track?.epochs ?? [], vehicle: vehicle, variation: declination)
        for i in file.samples.indices {
            let dt = AttitudeFilter.replayInterval(file.samples, i)
            let s = driving.compensated(file.samples[i], filter: filter.filter)
            filter.update(s, dt: dt)
            for (time, outcome) in filter.takeOutcomes() {
                if case .accepted(let change) = outcome {
                    Syscall.printToStandardError("t \(JSONObjectWriter.shortest(time)) s: \(change.summary)\n")
                    if change.turnsTheHeading { driving.calibrationChanged(at: time) }
                }
            }
            let compass = AttitudeAngles(filter.filter.quaternion, body: axes).heading
            driving.step(s, filter: &filter, compass: compass)
            let q = filter.filter.quaternion
            let turn = declination + driving.deviation(at: compass)
            let oriented = turn == 0 ? q : q.trueNorth(declination: turn)
            let angles = AttitudeAngles(oriented, body: axes)
            let t = file.samples[i].time
            if json {
                var w = JSONObjectWriter()
                w.number("t", t)
                w.fixedArray("quat_enu", oriented.w, oriented.x, oriented.y, oriented.z, 7)
                w.fixed("heading", angles.heading, 3)
                w.fixed("roll", angles.roll, 3)
                w.fixed("pitch", angles.pitch, 3)
                output.append(w.finished())
            } else {
                output.append(JSONObjectWriter.shortest(t))
                for v in [oriented.w, oriented.x, oriented.y, oriented.z] { output.append(","); output.appendFixed(v, 7) }
                for v in [angles.heading, angles.pitch, angles.roll] { output.append(","); output.appendFixed(v, 3) }
            }
            output.append("\n")
            try output.flushIfFull()
        }
        try output.flush()
        driving.report()
        if let path = saveCalibration, let online = filter.calibration, let last = file.samples.last {
            try Self.save(online, time: GPSTimestamp(unixTime: last.time), to: path)
        }
    }

    /// Writes what `online` learnt as the daemon keeps it, stamped with the last sample's time; says so on
    /// standard error, or why nothing was written.
    static func save(_ online: OnlineMagnetometerCalibration, time: GPSTimestamp, to path: String) throws {
        guard online.origin == .auto else {
            Syscall.printToStandardError("no calibration learnt from these samples: \(path) not written\n")
            return
        }
        let state = OnlineCalibrationState(online, mode: .track, time: time, wmm: nil)
        let record = OnlineCalibrationRecord(state: state, chip: nil, baseline: nil, time: time.iso8601)
        do {
            try AtomicFile.write(Array(record.encoded()), to: path)
        } catch {
            Syscall.printToStandardError("Error: \(path): the calibration cannot be written: \(error)\n")
            throw ExitCode(1)
        }
        Syscall.printToStandardError("calibration written to \(path)\n")
    }

    static func badInput(_ message: String) -> ExitCode {
        Syscall.printToStandardError("Error: \(message)\n")
        return ExitCode(2)
    }
}

/// Text for standard output, written in blocks of about 64 KiB as it is made.
private struct StreamedOutput {
    private var buffer: [UInt8] = []
    private static let blockSize = 1 << 16

    init() { buffer.reserveCapacity(Self.blockSize + 256) }

    mutating func append(_ s: String) { buffer.append(contentsOf: s.utf8) }
    mutating func appendFixed(_ v: Double, _ decimals: Int) { JSONObjectWriter.appendFixed(v, decimals: decimals, to: &buffer) }

    mutating func flushIfFull() throws {
        if buffer.count >= Self.blockSize { try flush() }
    }

    /// Writes what is buffered; a closed pipe (the reader went away) ends the command quietly.
    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        do {
            try Syscall.writeStandardOutput(buffer)
        } catch {
            throw ExitCode(1)
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// `--gnss`: the track's epochs, as the samples reach them, into the deviation from driving on land
/// (`PassiveDeviation`, as the daemon's fusion stage learns it; its curve corrects the headings from then on),
/// or for a boat into a GNSS swing (`SwingCollector`, as `bearing swing` runs it), solved at the end with the
/// current, from 60 s after the last calibration change that turned the heading. On land the epochs' speeds
/// also take the vehicle's own acceleration out of the accelerometer (`VehicleAcceleration`), as the daemon does.
private struct DrivingDeviation {
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

    init(epochs: [GNSSTrackFile.Epoch], vehicle: Vehicle, variation: Double) {
        self.epochs = epochs
        passive = vehicle.learnsFromDriving && !epochs.isEmpty
        self.variation = variation
        if !vehicle.learnsFromDriving && !epochs.isEmpty {
            swing = SwingCollector()
            Syscall.printToStandardError("--vehicle boat: in a current the course over ground is not the heading; the track is solved as a GNSS swing, with the current, at the end (bearing swing applies one)\n")
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
                Syscall.printToStandardError("t \(JSONObjectWriter.shortest(e.time)) s: deviation from driving: \(describe())\n")
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

    func report() {
        if let swing {
            do throws(SwingError) {
                Syscall.printToStandardError("GNSS swing over the track:\n\(Swing.report(try swing.solve()))\n")
            } catch {
                Syscall.printToStandardError("GNSS swing over the track: \(error.message)\n")
            }
        }
        guard passive else { return }
        Syscall.printToStandardError("deviation from driving at the end: \(describe())\n")
    }
}
