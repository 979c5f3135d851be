import BearingClient
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Step 4 of `calibrate`: the calibration file, written atomically (a crash leaves the old file or the new
/// one), and the daemon asked to reload it.
public enum CalibrationSaving {
    /// Writes the record to `target`; returns `target`.
    public static func write(_ fitted: FittedCalibration, _ samples: CalibrationSamples, chip: String, units: String,
                      to target: String) throws -> String {
        let record = CalibrationRecord(fit: fitted.fit, chip: chip, device: samples.device, units: units, fieldSource: fitted.fieldSource,
                                       position: fitted.position.map { [$0.x, $0.y, $0.z] }, time: GPSTimestamp.now())
        try writeFile(record.encoded(), to: target)
        return target
    }

    /// Sends `?CALIBRATION={"reload":true};` and returns what the daemon said, or nil when none runs; `part`
    /// (`accelerometer`, `level`) reports that object of the answer instead of the magnetometer's.
    public static func askDaemonToReload(_ path: String, part: String? = nil) -> String? {
        let client = BearingClient(.unix(path))
        do throws(BearingClientError) {
            try client.connect()
        } catch {
            return nil
        }
        do throws(BearingClientError) {
            let m = try client.request(.calibration(reload: true), expecting: "CALIBRATION")
            guard let part else { return "reloaded, calibration \(m.string("status") ?? "?") (\(m.string("file") ?? "?"))" }
            guard let o = m[part] else { return "reloaded; it reads no accelerometer (no imu: section), so it keeps no \(part) file" }
            return "reloaded, \(part) \(o["status"]?.string ?? "?") (\(o["file"]?.string ?? "?"))"
        } catch {
            if case .refused(_, let message) = error { return "rejected it: \(message)" }
            if case .timeout = error { return "no reply within 5 s" }
            return "no reply"
        }
    }

    /// Writes a calibration, accelerometer calibration or level file atomically (a crash leaves the old file
    /// or the new one); the error says what to do when permission is what is missing.
    public static func writeFile(_ data: Data, to target: String) throws {
        do throws(SystemError) {
            try AtomicFile.write(Array(data), to: target)
        } catch {
            throw CalibrateError("cannot write \(target): \(error)\(error.errno == EACCES ? " (run as root or as the bearing user, or give --output)" : "")")
        }
    }

    /// What a report prints after its summary: the file saved and the daemon's answer, or why nothing was saved.
    public static func outcomeLines(saved: String?, notSaved: String?, daemon: String?) -> [String] {
        (saved.map { ["saved \($0)" + (daemon.map { "; daemon: \($0)" } ?? "")] } ?? []) + (notSaved.map { ["not saved: \($0)"] } ?? [])
    }
}
