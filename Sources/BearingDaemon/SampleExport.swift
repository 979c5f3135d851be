import BearingModel
import BearingPOSIX
import BearingRecording
import BearingCalibration
import BearingCompass
import BearingPublishing
import BearingSensors

/// `bearing replay --export-samples`: a recording's IMU samples as the CSV `bearing attitude --samples` reads,
/// each field sample once, on the IMU row after it (as the daemon fuses a field sample before the inertial
/// sample that follows it; the other rows' mag cells are empty) — read through the real chip drivers from the
/// recorded bus transfers, in the chips' own axes, uncalibrated. Rows start at the first field sample.
/// `t` is on the fusion's clock (`SampleClock`, given each record's time, the pipeline's monotonic clock, as the daemon
/// gave it): a step of the wall clock in the recording is taken out as the daemon took it out, where the stamps would
/// have left a gap of the step forward or a `t` going back, which `bearing attitude` refuses. A row the fusion's clock
/// puts at or before the one before it (a sample handed over late) is left out.
public enum SampleExport {
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    /// Writes the CSV; returns the rows written.
    public static func write(_ recording: Recording, to path: String) throws -> Int {
        let config = try ConfigOrigin(recorded: recording.environment, yaml: recording.configText).resolve()
        let magnetometer = MagnetometerReader.replay(config.magnetometer.reader)
        let imu = InertialReader.replay(config.imu.reader)
        /// The newest field sample not yet written, and whether one has come at all.
        var field: Vector3?
        var fieldSeen = false
        var chip = ""
        var first: GPSTimestamp?
        /// The fusion's clock, and its shift at the first row.
        var clock = SampleClock()
        var firstShift = 0.0
        var lastRow = -Double.infinity
        var lines = ["# bearing-samples chip=\(chip) source=replay", IMUSampleFile.header]
        var rows = 0
        for (i, e) in recording.events.enumerated() {
            do {
                // Every sample through the fusion's clock, as the daemon's fusion took it.
                if case .sensorSample(_, let time, _) = e.record { _ = clock.time(time.unixTime, elapsed: PipelineClock.seconds(e.time)) }
                switch e.record {
                case .sensorConnect(.magnetometer, let bus, let t): try magnetometer.connect(bus: bus, t)
                case .sensorConnect(.imu, let bus, let t): try imu.connect(bus: bus, t)
                case .sensorSample(.magnetometer, let time, let t):
                    field = try magnetometer.read(t, time: time).field
                    fieldSeen = true
                case .sensorSample(.imu, let time, let t):
                    let s = try imu.read(t, time: time)
                    chip = s.chip
                    if first == nil { firstShift = clock.shift }
                    let t0 = first ?? time
                    first = t0
                    // From the stamps' own seconds and nanoseconds (exact), with the fusion clock's shift since the first.
                    let seconds = Double(time.seconds - t0.seconds) + Double(time.nanoseconds - t0.nanoseconds) / 1e9 + (clock.shift - firstShift)
                    guard seconds > lastRow else { continue }
                    lastRow = seconds
                    let g = s.angularRate ?? Vector3(0, 0, 0)
                    var row = String(printf: "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f", seconds, s.acceleration.x, s.acceleration.y,
                                     s.acceleration.z, g.x, g.y, g.z)
                    guard fieldSeen else { continue }
                    if let m = field { row += String(printf: ",%.4f,%.4f,%.4f", m.x, m.y, m.z) } else { row += ",,," }
                    field = nil
                    lines.append(row)
                    rows += 1
                default: break
                }
            } catch {
                throw Failure(description: "record \(i + 1) (frame at byte offset \(recording.offsets[i])): \(error)")
            }
        }
        lines[0] = "# bearing-samples chip=\(chip) source=replay"
        try AtomicFile.write(Array((lines.joined(separator: "\n") + "\n").utf8), to: path)
        return rows
    }
}
