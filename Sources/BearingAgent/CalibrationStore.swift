import BearingCore
import BearingIO
import Foundation
import Logging

/// The magnetometer calibration in force. Loaded from the calibration file at start, reloaded on SIGHUP
/// and on a client's `?CALIBRATION={"reload":true};`. A file that is corrupt, in the wrong units or for
/// another chip is rejected with a log line naming the reason, and the calibration in force stays.
public final class CalibrationStore: @unchecked Sendable {
    public let path: String
    /// The configured chip, when the config names one (checked at load; else checked on the first sample).
    public let expectedChip: String?
    private let logger: Logger
    private let lock = NSLock()
    private var active: (record: CalibrationRecord, calibration: MagneticCalibration, loaded: GPSTimestamp)?
    private var lastError: String?
    /// Called with the new CALIBRATION object after every load attempt.
    public var onChange: (@Sendable (String) -> Void)?

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
        onChange?(line())
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
            return .success((record, try record.calibration(), Agent.now()))
        } catch {
            return .failure(error)
        }
    }

    /// The correction for a sample from `chip`: identity without a calibration, or when the calibration
    /// was fitted for another chip (which is then dropped, loudly, once).
    public func calibration(for chip: String) -> MagneticCalibration {
        lock.lock()
        guard let a = active else { lock.unlock(); return .identity }
        if a.record.chip == chip { lock.unlock(); return a.calibration }
        active = nil
        lastError = "\(path): fitted for chip \(a.record.chip), the magnetometer found is \(chip)"
        let message = lastError!
        lock.unlock()
        logger.error("calibration dropped: \(message); headings are uncalibrated until a matching calibration is loaded")
        onChange?(line())
        return .identity
    }

    public var current: CalibrationRecord? {
        lock.lock(); defer { lock.unlock() }
        return active?.record
    }

    /// The CALIBRATION object: which calibration is in force and its figures.
    public func line() -> String {
        lock.lock()
        let a = active, error = lastError
        lock.unlock()
        var w = JSONObjectWriter(class: "CALIBRATION")
        w.string("status", a == nil ? "none" : "active")
        w.string("file", path)
        if let a {
            let r = a.record
            w.string("chip", r.chip)
            w.string("model", r.model.rawValue)
            w.string("fitted", r.time)
            w.string("loaded", a.loaded.iso8601)
            let list = { (values: [Double]) in "[" + values.map(JSONObjectWriter.shortest).joined(separator: ",") + "]" }
            w.raw("offset", list(r.offset))
            w.raw("matrix", "[" + r.matrix.map(list).joined(separator: ",") + "]")
            w.number("field", r.field)
            w.string("field_source", r.fieldSource)
            w.number("gaps", r.figures.gaps)
            w.number("variance", r.figures.variance)
            w.number("wobble", r.figures.wobble)
            w.number("fit_error", r.figures.fitError)
            w.number("heading_error", r.figures.headingError)
            w.int("samples", r.samples)
        }
        if let error { w.string("error", error) }
        return w.finished()
    }

    static func rounded(_ v: Double) -> String { String(format: "%.2f", v) }
}
