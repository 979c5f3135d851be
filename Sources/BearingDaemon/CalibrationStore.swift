import BearingCompass
import BearingModel
import BearingPublishing
import BearingCalibration
import BearingOnlineCalibration
import BearingPOSIX
import BearingLog
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a calibration file holds once read and checked, for a `CalibrationFileStore`: the magnetometer's
/// calibration, the accelerometer's, the mounting level.
public protocol CalibrationFileContent: Equatable, Sendable {
    /// What it is called in log lines and errors: `calibration`, `accelerometer calibration`, `mounting level`.
    static var kind: String { get }
    /// What it means to have none, for the log: `headings are uncalibrated (mag_st C); run …`.
    static var without: String { get }
    /// Reads and checks a file's bytes; errors name `path` and what is wrong.
    static func load(_ data: Data, path: String) throws(CalibrationFitError) -> Self
    /// The chip it was fitted for; nil when it holds for any chip.
    var fittedChip: String? { get }
    /// The sensor it was learnt on, for what is learnt in place (online calibration, the deviation from
    /// driving); nil when it holds for any sensor of its chip.
    var learntOn: SensorIdentity? { get }
    /// What stays in force when a new file is rejected: `the calibration fitted 2026-…`.
    var inForce: String { get }
    /// What the log line of a load says about it, and a caution to log with it.
    var logMetadata: Logger.Metadata { get }
    var caution: String? { get }
}

extension CalibrationFileContent {
    public var learntOn: SensorIdentity? { nil }
}

/// A calibration file the daemon keeps in force: loaded at start, reloaded on SIGHUP and on a client's
/// `?CALIBRATION={"reload":true};`. A file that is corrupt, in the wrong units or for another chip is
/// rejected with a log line naming the file and the reason, and what was in force stays.
public final class CalibrationFileStore<Content: CalibrationFileContent>: Sendable {
    public let path: String
    /// The configured chip, when the config names one (checked at load; else checked on the first sample).
    public let expectedChip: String?
    private let logger: Logger
    private struct State {
        var active: (content: Content, loaded: GPSTimestamp)?
        var lastError: String?
        var onChange: (@Sendable () -> Void)?
    }
    private let guarded = Mutex(State())
    /// Called after every load attempt and drop.
    public var onChange: (@Sendable () -> Void)? {
        get { guarded.withLock { $0.onChange } }
        set { guarded.withLock { $0.onChange = newValue } }
    }

    public init(path: String, expectedChip: String?, logger: Logger) {
        self.path = path
        self.expectedChip = expectedChip
        self.logger = logger
    }

    /// Loads the file. Returns nil on success (or when there is no file at start), else the reason the
    /// file was rejected; what was in force is then unchanged.
    @discardableResult
    public func reload(reason: String) -> String? {
        let outcome = load()
        let (previous, now) = guarded.withLock { s in
            let previous = s.active
            switch outcome {
            case .success(let loaded?):
                s.active = loaded
                s.lastError = nil
            case .success(nil):
                s.lastError = nil
            case .failure(let e):
                s.lastError = e.message
            }
            return (previous, s.active)
        }

        let kind = Content.kind
        switch outcome {
        case .success(let loaded?):
            logger.notice("\(kind) loaded (\(reason))", metadata: ["file": "\(path)"].merging(loaded.content.logMetadata) { $1 })
            if let caution = loaded.content.caution { logger.warning("\(caution)") }
        case .success(nil):
            if previous == nil {
                logger.notice("no \(kind) file: \(Content.without)", metadata: ["file": "\(path)"])
            } else {
                logger.warning("\(kind) file is gone (\(reason)); keeping the \(kind) in force", metadata: ["file": "\(path)"])
            }
        case .failure(let e):
            let keeping = now.map { "keeping \($0.content.inForce)" } ?? "none in force: \(Content.without)"
            logger.error("\(kind) rejected (\(reason)): \(e.message); \(keeping)", metadata: ["file": "\(path)"])
        }
        onChange?()
        if case .failure(let e) = outcome { return e.message }
        return nil
    }

    private func load() -> Result<(content: Content, loaded: GPSTimestamp)?, CalibrationFitError> {
        let bytes: [UInt8]
        do {
            bytes = try AtomicFile.read(path, limit: 256 * 1024)
        } catch {
            if error.errno == ENOENT { return .success(nil) }
            return .failure(CalibrationFitError("\(path): \(error.message)"))
        }
        do throws(CalibrationFitError) {
            let content = try Content.load(Data(bytes), path: path)
            if let expectedChip, let chip = content.fittedChip, chip != expectedChip {
                throw CalibrationFitError("\(path): fitted for chip \(chip), the configured chip is \(expectedChip)")
            }
            return .success((content, GPSTimestamp.now()))
        } catch {
            return .failure(error)
        }
    }

    /// Drops what is in force when it was fitted for another chip than the `sensor` found (`chip: auto`),
    /// loudly, once. The file stays where it is (the user's, for the chip it was fitted on). Returns whether it did.
    @discardableResult
    public func dropIfMismatched(chip: String, sensor: String) -> Bool {
        retire("dropped") { content in
            content.fittedChip.flatMap { $0 == chip ? nil : "\(path): fitted for chip \($0), the \(sensor) found is \(chip)" }
        }
    }

    /// Sets aside what is in force when it was learnt on another sensor than `sensor` (the one found): the file
    /// is renamed to `PATH.set-aside` (so that what is learnt here is kept at the path, and nothing is lost),
    /// named in the journal and in the state's error, and never used. Returns whether it did.
    @discardableResult
    public func setAsideIfLearntOnAnother(_ sensor: SensorIdentity) -> Bool {
        let aside = "\(path).set-aside"
        return retire("set aside", { content in
            content.learntOn.flatMap { $0 == sensor ? nil : "\(path): learnt on \($0), not on this \(sensor)" }
        }, then: { reason in
            do throws(SystemError) {
                try AtomicFile.move(path, to: aside)
                return "\(reason): set aside as \(aside)"
            } catch {
                return "\(reason): not used, and not set aside (\(error.message))"
            }
        })
    }

    /// Takes what is in force out of use when `mismatch` names why it does not belong to the sensor found: `then`
    /// does what the file needs and completes the message, which becomes the state's error and one journal line.
    private func retire(_ verb: String, _ mismatch: (Content) -> String?, then: (String) -> String = { $0 }) -> Bool {
        let reason = guarded.withLock { s -> String? in
            guard let a = s.active, let reason = mismatch(a.content) else { return nil }
            s.active = nil
            return reason
        }
        guard let reason else { return false }
        let message = then(reason)
        guarded.withLock { $0.lastError = message }
        logger.error("\(Content.kind) \(verb): \(message); \(Content.without)")
        onChange?()
        return true
    }

    /// What is in force.
    public var current: Content? { guarded.withLock { $0.active?.content } }

    /// The file, what is in force from it and since when, and the last rejection.
    public var state: CalibrationFileState<Content> {
        guarded.withLock { CalibrationFileState(file: path, record: $0.active?.content, loaded: $0.active?.loaded, error: $0.lastError) }
    }
}

private func rounded(_ v: Double) -> String { String(printf: "%.2f", v) }

/// The magnetometer's calibration file.
public typealias CalibrationStore = CalibrationFileStore<CalibrationRecord>

extension CalibrationRecord: CalibrationFileContent {
    public static let kind = "calibration"
    public static let without = "headings are uncalibrated (mag_st C); run `bearing calibrate`"

    public static func load(_ data: Data, path: String) throws(CalibrationFitError) -> CalibrationRecord {
        let record = try decode(data, source: path)
        guard record.units == microtesla else {
            throw CalibrationFitError("\(path): units \"\(record.units)\", the daemon's samples are in µT (\"uT\"); calibrate from the daemon, the sensor or a bearing recording")
        }
        return record
    }

    public var fittedChip: String? { chip }
    public var inForce: String { "the calibration fitted \(time)" }
    public var logMetadata: Logger.Metadata {
        ["chip": "\(chip)", "model": "\(model.rawValue)", "fitted": "\(time)", "field": "\(field)",
         "fit_error": "\(rounded(figures.fitError))%",
         "heading_error": "\(figures.headingError.map { "\(rounded($0))°" } ?? "unknown")"]
    }
    public var caution: String? {
        model == .planar ? "the calibration is a 2-D fit: headings are right only while the board is level" : nil
    }
    /// The correction it describes, for the compass stages; scaled to WMM's where it was fitted (`field_source` "wmm"),
    /// its field is WMM's there.
    public var active: ActiveCalibration? {
        (try? calibration()).map { ActiveCalibration(chip: chip, correction: $0, field: field, fieldWMM: fieldSource == "wmm" ? field : nil) }
    }
}

extension OnlineCalibrationRecord: CalibrationFileContent {
    public static let kind = "online calibration"
    public static let without = "online calibration starts from the calibration file"

    public static func load(_ data: Data, path: String) throws(CalibrationFitError) -> OnlineCalibrationRecord {
        try decode(data, source: path)
    }

    public var fittedChip: String? { chip }
    public var learntOn: SensorIdentity? { sensor }
    public var inForce: String { "the online calibration learnt \(time)" }
    public var logMetadata: Logger.Metadata {
        ["learnt": "\(time)", "baseline": "\(baseline ?? "none")", "regions": "\(regions)", "steps": "\(steps)",
         "misfit": "\(misfitPercent.map { "\(rounded($0)) %" } ?? "unknown") + \(dipSpread.map { "\(rounded($0))°" } ?? "unknown")"]
    }
    public var caution: String? { nil }
}

extension DrivingDeviationRecord: CalibrationFileContent {
    public static let kind = "deviation from driving"
    public static let without = "the deviation is learnt from driving afresh"

    public static func load(_ data: Data, path: String) throws(CalibrationFitError) -> DrivingDeviationRecord {
        try decode(data, source: path)
    }

    public var fittedChip: String? { nil }
    public var learntOn: SensorIdentity? { sensor }
    public var inForce: String { "the deviation from driving kept \(time)" }
    public var logMetadata: Logger.Metadata {
        var m: Logger.Metadata = ["kept": "\(time)", "sectors": "\(sectors.filter { !$0.isEmpty }.count)",
                                  "observations": "\(sectors.map(\.count).reduce(0, +))"]
        if let f = forward, f.count == 3 { m["forward"] = "\(String(printf: "%.3f,%.3f,%.3f", f[0], f[1], f[2]))" }
        if let u = up, u.count == 3 { m["up"] = "\(String(printf: "%.3f,%.3f,%.3f", u[0], u[1], u[2]))" }
        return m
    }
    public var caution: String? { nil }
}

extension AccelerometerCalibrationRecord: CalibrationFileContent {
    public static let kind = "accelerometer calibration"
    public static let without = "the accelerometer is uncorrected; `bearing calibrate --accel` fits its offset and gains"

    public static func load(_ data: Data, path: String) throws(CalibrationFitError) -> AccelerometerCalibrationRecord {
        try decode(data, source: path)
    }

    public var fittedChip: String? { chip }
    public var inForce: String { "the accelerometer calibration fitted \(time)" }
    public var logMetadata: Logger.Metadata {
        ["chip": "\(chip)", "model": "\(model.rawValue)", "fitted": "\(time)", "poses": "\(figures.poses)",
         "residual": "\(rounded(figures.residualMilliG)) mg"]
    }
    public var caution: String? { nil }
    /// The correction it describes, for the fusion.
    public var active: ActiveCalibration? { (try? correction()).map { ActiveCalibration(chip: chip, correction: $0) } }
}

extension DeviationRecord: CalibrationFileContent {
    public static let kind = "deviation curve"
    public static let without = "the compass heading carries no deviation correction; `bearing swing` measures one"

    public static func load(_ data: Data, path: String) throws(CalibrationFitError) -> DeviationRecord {
        try decode(data, source: path)
    }

    public var fittedChip: String? { nil }
    public var inForce: String { "the deviation curve measured \(time)" }
    public var logMetadata: Logger.Metadata {
        ["measured": "\(time)", "source": "\(source)",
         "coefficients": "\(zip(DeviationCurve.names, coefficients).map { "\($0) \(rounded($1))°" }.joined(separator: ", "))"]
    }
    public var caution: String? { nil }
}

extension MountingLevelRecord: CalibrationFileContent {
    public static let kind = "mounting level"
    public static let without = "roll and pitch are the board's own; `bearing level` measures a board mounted off level"

    public static func load(_ data: Data, path: String) throws(CalibrationFitError) -> MountingLevelRecord {
        try decode(data, source: path)
    }

    public var fittedChip: String? { nil }
    public var inForce: String { String(printf: "the mounting level measured %@ (roll %.2f°, pitch %.2f°)", time, roll, pitch) }
    public var logMetadata: Logger.Metadata {
        ["roll": "\(rounded(roll))°", "pitch": "\(rounded(pitch))°", "measured": "\(time)"]
    }
    public var caution: String? { nil }
}
