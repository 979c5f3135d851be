import BearingClient
import BearingSensors
import BearingCalibration
import BearingModel
import BearingWire
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What a mounting level was measured from, and with what.
public struct LevelInput {
    public var measurement: LevelMeasurement
    /// `file`, `daemon` or `sensor`.
    public var source: String
    public var device: String?
    /// When the accelerometer calibration applied was fitted; nil when none was.
    public var accelerometerCalibration: String?
    /// The level the daemon had in force while measuring (taken back out of its ATT vectors).
    public var previous: MountingLevel?
    /// Where the daemon keeps its level file, when it was measured through the daemon.
    public var daemonFile: String?
    public var notes: [String] = []
    /// Samples received, and what the source last said (why there were none, if there were none).
    public var samples = 0
    public var status = ""
}

/// Where `bearing level` gets calibrated, board-frame specific force: an IMU recording, the running daemon's
/// ATT stream, or the IMU itself. The recording and the IMU give raw chip-axis samples, which are corrected
/// by the accelerometer calibration (when it was fitted for their chip) and turned into the board frame by
/// `imu.orientation`; the daemon's ATT is already both, and levelled by the level in force, which is undone.
public enum LevelSources {
    /// The accelerometer calibration to apply to raw samples: `path` (which must exist) or, when nil, the
    /// config's file (`defaultPath`) if there is one.
    public static func accelerometerCalibration(_ path: String?, defaultPath: String) throws -> AccelerometerCalibrationRecord? {
        let file = path ?? defaultPath
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(file, limit: 256 * 1024)
        } catch {
            if error.errno == ENOENT && path == nil { return nil }
            throw CalibrateError("\(file): \(error.message)")
        }
        do { return try AccelerometerCalibrationRecord.decode(Data(bytes), source: file) } catch { throw CalibrateError(error.message) }
    }

    /// Chip axes → calibrated board frame, for raw samples of `chip`.
    public struct Conversion {
        var correction: AccelerometerCorrection = .identity
        var orientation: Orientation
        var applied: String?
        var note: String?

        init(_ record: AccelerometerCalibrationRecord?, chip: String?, orientation: Orientation) {
            self.orientation = orientation
            guard let record else { return }
            if chip == record.chip, let c = try? record.correction() {
                correction = c
                applied = record.time
            } else {
                note = "the accelerometer calibration is for chip \(record.chip), the samples are \(chip.map { "from \($0)" } ?? "of no named chip"): not applied"
            }
        }

        func force(_ raw: Vector3) -> Vector3 { orientation.toBoard(correction.apply(raw)) }
        func rate(_ raw: Vector3?) -> Vector3? { raw.map(orientation.toBoard) }
    }

    public static func file(_ path: String, duration: Double, calibration: AccelerometerCalibrationRecord?, orientation: Orientation) throws -> LevelInput {
        let file = try InertialInput.read(path)
        let chip = file.metadata["chip"]
        let conversion = Conversion(calibration, chip: chip, orientation: orientation)
        var m = LevelMeasurement(duration: duration)
        for s in file.samples {
            if m.add(time: s.time, specificForce: conversion.force(s.accelerometer),
                     angularRate: file.hasGyroscope ? conversion.rate(s.gyroscope) : nil) { break }
        }
        return LevelInput(measurement: m, source: "file", device: file.metadata["device"], accelerometerCalibration: conversion.applied,
                          notes: conversion.note.map { [$0] } ?? [], samples: file.samples.count)
    }

    public static func sensor(_ reader: InertialReader.Configuration, duration: Double, timeout: Double, calibration: AccelerometerCalibrationRecord?,
                       orientation: Orientation, progress: any CollectionProgress) -> LevelInput {
        let buffer = InertialSampleBuffer()
        let sensor = InertialSensorSource(configuration: reader, buffer: buffer)
        sensor.start()
        defer { sensor.stop() }
        var input = LevelInput(measurement: LevelMeasurement(duration: duration), source: "sensor")
        var conversion: Conversion?
        let start = Syscall.monotonicSeconds()
        var lastDraw = -10.0
        while true {
            usleep(100_000)
            let (samples, status, failure) = buffer.take()
            input.status = status
            if let failure { input.notes.append("stopped: \(failure)"); return input }
            for s in samples {
                input.samples += 1
                if conversion == nil {
                    conversion = Conversion(calibration, chip: s.chip, orientation: orientation)
                    input.device = s.device
                    input.accelerometerCalibration = conversion?.applied
                    if let note = conversion?.note { input.notes.append(note) }
                }
                if input.measurement.add(time: s.time.unixTime, specificForce: conversion!.force(s.acceleration),
                                         angularRate: conversion!.rate(s.angularRate)) { return input }
            }
            let now = Syscall.monotonicSeconds() - start
            if now >= timeout { return input }
            if now - lastDraw >= (progress.live ? 0.25 : 1) {
                showProgress(input.measurement, status: status, elapsed: now, timeout: timeout, progress: progress)
                lastDraw = now
            }
        }
    }

    /// Through the running daemon: its ATT stream, every sample (a chain of this client's own keeps only
    /// the vectors), with the level in force taken back out. Nil when no daemon answers.
    public static func daemon(_ path: String, duration: Double, timeout: Double, progress: any CollectionProgress) throws -> LevelInput? {
        let client = BearingClient(.unix(path))
        do throws(BearingClientError) { try client.connect() } catch { return nil }
        defer { client.disconnect() }
        let status: WireMessage
        do { status = try client.request(.calibration(reload: false), expecting: "CALIBRATION") } catch {
            throw CalibrateError("the bearing daemon at \(path): \(error)")
        }
        guard let level = status["level"] else {
            throw CalibrateError("the bearing daemon at \(path) reads no accelerometer (its config has no imu: section); give --samples FILE, or --direct with a config that has one")
        }
        let previous = Self.level(level)
        let undo = (previous?.matrix ?? .identity).transposed
        var input = LevelInput(measurement: LevelMeasurement(duration: duration), source: "daemon", previous: previous,
                               daemonFile: level["file"]?.string)
        if status["accelerometer"]?["status"]?.string == "active" { input.accelerometerCalibration = status["accelerometer"]?["fitted"]?.string }
        let keep = ["time", "device", "acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z", "quat"]
        do throws(BearingClientError) {
            try client.send(.watch(WatchChange(enable: true, json: true, classes: .some(["ATT", "CALIBRATION"]), pipelines: [.att: [.fields(keep)]])))
        } catch {
            throw CalibrateError("the bearing daemon at \(path): \(error)")
        }
        let start = Syscall.monotonicSeconds()
        var lastDraw = -10.0
        let degrees = Double.pi / 180
        input.status = "no ATT with acc_x/y/z from the bearing daemon at \(path): is its accelerometer connected (STATE)?"
        while Syscall.monotonicSeconds() - start < timeout {
            let next: WireMessage?
            do { next = try client.next(timeout: 0.25) } catch { throw CalibrateError("the bearing daemon at \(path): \(error)") }
            if let m = next {
                if m.className == "CALIBRATION", let l = m["level"], Self.level(l) != previous {
                    throw CalibrateError("the daemon's mounting level changed while measuring (another `bearing level`?); run this again")
                }
                // Bearing's fused ATT (gpsd's own ATT has no quaternion).
                if m.className == "ATT", m["quat"] != nil, let t = m.time, let x = m.number("acc_x"), let y = m.number("acc_y"), let z = m.number("acc_z") {
                    input.device = m.string("device") ?? input.device
                    input.samples += 1
                    var rate: Vector3?
                    if let gx = m.number("gyro_x"), let gy = m.number("gyro_y"), let gz = m.number("gyro_z") { rate = undo * (Vector3(gx, gy, gz) * degrees) }
                    if input.measurement.add(time: t.unixTime, specificForce: undo * Vector3(x, y, z), angularRate: rate) { return input }
                }
            }
            let now = Syscall.monotonicSeconds() - start
            if now - lastDraw >= (progress.live ? 0.25 : 1) {
                showProgress(input.measurement, status: "reading the ATT of the bearing daemon at \(path)", elapsed: now, timeout: timeout, progress: progress)
                lastDraw = now
            }
        }
        return input
    }

    /// The level in a CALIBRATION object's `level`, nil when none is in force.
    public static func level(_ o: JSONValue) -> MountingLevel? {
        guard o["status"]?.string == "active", let roll = o["roll"]?.number, let pitch = o["pitch"]?.number else { return nil }
        return MountingLevel(roll: roll, pitch: pitch)
    }

    public static func showProgress(_ m: LevelMeasurement, status: String, elapsed: Double, timeout: Double, progress: any CollectionProgress) {
        let still = m.detector.holding.map { String(printf: "still %.1f s of %.1f", $0.duration, m.duration) }
            ?? "moving: leave the board still on its mount, the vehicle level"
        progress.frame([status, still + String(printf: "   %.0f s of %.0f", elapsed, timeout)],
                       plainLine: String(printf: "%4.0f s  ", elapsed) + still + "  (\(status))")
    }
}
