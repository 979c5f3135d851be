import BearingCore
import BearingIO
import Foundation
import Logging

/// The magnetometer calibration in force. Loaded from the calibration file at start, reloaded on SIGHUP
/// and on a client's `?CALIBRATION={"reload":true};`. A file that is corrupt, in the wrong units or for
/// another chip is rejected with a log line naming the reason, and the calibration in force stays.
public final class CalibrationStore: @unchecked Sendable { // `lock` guards `active` and `lastError`
    public let path: String
    /// The configured chip, when the config names one (checked at load; else checked on the first sample).
    public let expectedChip: String?
    private let logger: Logger
    private let lock = NSLock()
    private var active: (record: CalibrationRecord, calibration: MagneticCalibration, loaded: GPSTimestamp)?
    private var lastError: String?
    /// Called after every load attempt and drop, with the status and the correction in force.
    public var onChange: (@Sendable (CalibrationStatus, ActiveCalibration?) -> Void)?

    public init(path: String, expectedChip: String?, logger: Logger) {
        self.path = path
        self.expectedChip = expectedChip
        self.logger = logger
    }

    /// Loads the file. Returns nil on success (or when there is no file at start), else the reason the
    /// file was rejected; the calibration in force is then unchanged.
    @discardableResult
    public func reload(reason: String) -> String? {
        let outcome = load()
        lock.lock()
        let previous = active
        switch outcome {
        case .success(let loaded?):
            active = loaded
            lastError = nil
        case .success(nil):
            lastError = nil
        case .failure(let e):
            lastError = e.message
        }
        let now = active
        lock.unlock()

        switch outcome {
        case .success(let loaded?):
            let r = loaded.record
            logger.notice("calibration loaded (\(reason))", metadata: [
                "file": "\(path)", "chip": "\(r.chip)", "model": "\(r.model.rawValue)", "fitted": "\(r.time)",
                "field": "\(r.field)", "fit_error": "\(Self.rounded(r.figures.fitError))%",
                "heading_error": "\(r.figures.headingError.map { "\(Self.rounded($0))°" } ?? "unknown")",
            ])
            if r.model == .planar {
                logger.warning("the calibration is a 2-D fit: headings are right only while the board is level")
            }
        case .success(nil):
            if previous == nil {
                logger.notice("no calibration file: headings are uncalibrated (mag_st C); run `bearing calibrate`", metadata: ["file": "\(path)"])
            } else {
                logger.warning("calibration file is gone (\(reason)); keeping the calibration in force", metadata: ["file": "\(path)"])
            }
        case .failure(let e):
            let keeping = now.map { "keeping the calibration fitted \($0.record.time)" } ?? "headings stay uncalibrated"
            logger.error("calibration rejected (\(reason)): \(e.message); \(keeping)", metadata: ["file": "\(path)"])
        }
        notify()
        if case .failure(let e) = outcome { return e.message }
        return nil
    }

    private func load() -> Result<(record: CalibrationRecord, calibration: MagneticCalibration, loaded: GPSTimestamp)?, CalibrationFitError> {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path, limit: 256 * 1024)
        } catch {
            if error.errno == ENOENT { return .success(nil) }
            return .failure(CalibrationFitError("\(path): \(error.message)"))
        }
        do throws(CalibrationFitError) {
            let record = try CalibrationRecord.decode(Data(bytes), source: path)
            guard record.units == CalibrationRecord.microtesla else {
                throw CalibrationFitError("\(path): units \"\(record.units)\", the daemon's samples are in µT (\"uT\"); calibrate from the daemon, the sensor or a bearing recording")
            }
            if let expectedChip, record.chip != expectedChip {
                throw CalibrationFitError("\(path): fitted for chip \(record.chip), the configured chip is \(expectedChip)")
            }
            return .success((record, try record.calibration(), GPSTimestamp.now()))
        } catch {
            return .failure(error)
        }
    }

    /// Drops the calibration when it was fitted for another chip than the one found (`chip: auto`),
    /// loudly, once. Returns whether it did.
    @discardableResult
    public func dropIfMismatched(chip: String) -> Bool {
        lock.lock()
        guard let a = active, a.record.chip != chip else { lock.unlock(); return false }
        active = nil
        let message = "\(path): fitted for chip \(a.record.chip), the magnetometer found is \(chip)"
        lastError = message
        lock.unlock()
        logger.error("calibration dropped: \(message); headings are uncalibrated until a matching calibration is loaded")
        notify()
        return true
    }

    public var current: CalibrationRecord? {
        lock.lock(); defer { lock.unlock() }
        return active?.record
    }

    /// What the CALIBRATION object reports.
    public var status: CalibrationStatus {
        lock.lock(); defer { lock.unlock() }
        return CalibrationStatus(file: path, record: active?.record, loaded: active?.loaded, error: lastError)
    }

    /// The correction in force, for the compass stage.
    public var correction: ActiveCalibration? {
        lock.lock(); defer { lock.unlock() }
        return active.map { ActiveCalibration(chip: $0.record.chip, correction: $0.calibration) }
    }

    private func notify() { onChange?(status, correction) }

    static func rounded(_ v: Double) -> String { String(format: "%.2f", v) }
}
