import BearingWire
import ArgumentParser
import BearingTerminal
import BearingCalibration
import BearingOnlineCalibration
import BearingCalibrationWorkflow
import BearingAttitude
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct AttitudeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attitude",
        abstract: "Orientation from a recording of gyroscope, accelerometer and magnetometer samples.",
        discussion: """
            Runs the daemon's own fusion stage (VQF's method, default parameters) over the samples of \
            FILE, fed as the daemon is, and writes one line per sample: the quaternion that rotates sensor-frame vectors into \
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
    @Option(parsing: .unconditional, help: "Latitude,longitude[,height km]: the board's position, as the daemon's heading.fallback_position: the embedded WMM's field there, today (true north, and the field's strength and dip for online calibration) until the track's first fix.") var position: String?
    @Option(help: "The sensor axes: flu (x forward, y left, z up) or frd (x forward, y right, z down).") var body: String = BodyAxes.forwardLeftUp.rawValue
    @Option(help: "Online magnetometer calibration: track (learn hard and soft iron as the samples go) or off.") var calibration: String = "track"
    @Option(help: ArgumentHelp("GNSS epochs (CSV: t,lat,lon[,speed,track,eps]: s, degrees, m/s, degrees true, m/s), t on the samples' clock or "
        + "found where the track's turns match the gyroscope's (--gnss-offset): WMM at each fix, as the daemon takes them (true north, the field for "
        + "calibration) and, for a land vehicle, the deviation learnt from driving.", valueName: "file")) var gnss: String?
    // Unconditional: the value may start with a minus.
    @Option(parsing: .unconditional, help: ArgumentHelp("Seconds added to the track's times to put them on the samples' clock, or auto: found where the "
        + "track's turns match the gyroscope's (a track on another clock is shifted there and told; one whose turns match at no shift is refused).",
        valueName: "seconds|auto")) var gnssOffset: String = "auto"
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
        if gnssOffset != "auto" {
            guard let offset = Double(gnssOffset), offset.isFinite else {
                throw ValidationError("--gnss-offset \(gnssOffset): seconds (added to the track's times) or auto")
            }
            if gnss == nil { throw ValidationError("--gnss-offset \(offset) needs --gnss") }
        }
        if BodyAxes(rawValue: body) == nil {
            throw ValidationError("--body \(body): allowed: \(BodyAxes.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// The vehicles `--vehicle` takes (a board on no vehicle is the daemon's `none`: here a car is the default).
    static let vehicles: [String: Vehicle] = ["car": .car, "rover": .rover, "boat": .boat]

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
        if let note = file.repeatedLinesNote(source: samples) { Syscall.printToStandardError(note + "\n") }
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
        if let given = track, let path = gnss {
            do throws(OfflineAttitude.TrackRefused) {
                let (onClock, note) = try OfflineAttitude.onSamplesClock(given, source: path, file: file, offset: Double(gnssOffset))
                if let note { Syscall.printToStandardError(note + "\n") }
                track = onClock
            } catch {
                throw Self.badInput(error.description)
            }
        }
        var output = StandardOutputBuffer()
        if !json { output.append("t,qw,qx,qy,qz,heading,pitch,roll\n") }
        guard file.hasGyroscope || file.hasMagnetometer else {
            throw Self.badInput("\(samples): neither gyr_x,gyr_y,gyr_z nor mag_x,mag_y,mag_z columns: an accelerometer alone gives no attitude to follow")
        }
        var options = OfflineAttitude.Options()
        options.axes = BodyAxes(rawValue: body) ?? .forwardLeftUp
        options.declination = declination
        options.position = position.flatMap(Calibrate.parsePosition)
        options.calibrate = calibration != "off"
        options.vehicle = Self.vehicles[vehicle] ?? .car
        if let problem = OfflineAttitude.unitProblem(file, source: samples, options: options) { throw Self.badInput(problem) }
        let json = self.json
        let outcome = try OfflineAttitude.run(file, track: track, options: options, now: Date().timeIntervalSince1970,
                                              note: { Syscall.printToStandardError($0) }) { o in
            let (q, angles) = (o.quaternion, o.angles)
            if json {
                var w = JSONObjectWriter()
                w.number("t", o.time)
                w.fixedArray("quat_enu", q.w, q.x, q.y, q.z, 7)
                w.fixed("heading", angles.heading, 3)
                w.fixed("roll", angles.roll, 3)
                w.fixed("pitch", angles.pitch, 3)
                output.append(w.finished())
            } else {
                output.append(JSONObjectWriter.shortest(o.time))
                for v in [q.w, q.x, q.y, q.z] { output.append(","); output.appendFixed(v, 7) }
                for v in [angles.heading, angles.pitch, angles.roll] { output.append(","); output.appendFixed(v, 3) }
            }
            output.append("\n")
            if !output.flushIfFull() { throw ExitCode(1) }
        }
        if !output.flush() { throw ExitCode(1) }
        switch outcome.swing {
        case .success(let result)?: Syscall.printToStandardError("GNSS swing over the track:\n\(SwingReport.text(result))\n")
        case .failure(let error)?: Syscall.printToStandardError("GNSS swing over the track: \(error.message)\n")
        case nil: break
        }
        if let driving = outcome.driving { Syscall.printToStandardError("deviation from driving at the end: \(driving)\n") }
        if let path = saveCalibration, let online = outcome.calibration, let last = file.samples.last {
            guard let bytes = OfflineAttitude.record(online, time: GPSTimestamp(unixTime: last.time)) else {
                Syscall.printToStandardError("no calibration learnt from these samples: \(path) not written\n")
                return
            }
            do {
                try AtomicFile.write(bytes, to: path)
            } catch {
                Syscall.printToStandardError("Error: \(path): the calibration cannot be written: \(error)\n")
                throw ExitCode(1)
            }
            Syscall.printToStandardError("calibration written to \(path)\n")
        }
    }

    static func badInput(_ message: String) -> ExitCode {
        Syscall.printToStandardError("Error: \(message)\n")
        return ExitCode(2)
    }
}
