import BearingCompass
import BearingCalibration
import BearingOnlineCalibration
import BearingPublishing
import BearingLog

/// The calibration files the daemon keeps in force: the magnetometer's calibration and, with an IMU, the
/// accelerometer's calibration, the mounting level and the deviation curve. Loaded together at start and reloaded together on
/// SIGHUP and on `?CALIBRATION={"reload":true};`; reported together in the CALIBRATION object.
public final class CalibrationFiles: Sendable {
    public let magnetometer: CalibrationStore
    public let accelerometer: CalibrationFileStore<AccelerometerCalibrationRecord>?
    public let level: CalibrationFileStore<MountingLevelRecord>?
    /// The deviation curve (`bearing swing`'s), with an IMU: the fusion stage applies it.
    public let deviation: CalibrationFileStore<DeviationRecord>?
    /// The online calibration kept across restarts (nil: `calibration.auto` off).
    public let online: CalibrationFileStore<OnlineCalibrationRecord>?
    /// The deviation learnt from driving, kept across restarts (nil: no IMU, or not a car or rover).
    public let driving: CalibrationFileStore<DrivingDeviationRecord>?

    public init(config: AgentConfig, logger: Logger) {
        magnetometer = CalibrationStore(path: config.calibrationPath, expectedChip: config.magnetometer.reader.chip, logger: logger)
        if config.imu.enabled {
            accelerometer = CalibrationFileStore(path: config.accelerometerCalibrationPath, expectedChip: config.imu.reader.chip, logger: logger)
            level = CalibrationFileStore(path: config.levelPath, expectedChip: nil, logger: logger)
            deviation = CalibrationFileStore(path: config.deviationPath, expectedChip: nil, logger: logger)
        } else {
            accelerometer = nil
            level = nil
            deviation = nil
        }
        driving = config.imu.enabled && config.vehicle.learnsFromDriving
            ? CalibrationFileStore(path: config.drivingDeviationPath, expectedChip: nil, logger: logger) : nil
        online = config.autoCalibration == .off ? nil : CalibrationFileStore(path: config.autoCalibrationPath, expectedChip: config.magnetometer.reader.chip, logger: logger)
    }

    /// Called after any file's load attempt or drop.
    public func onChange(_ body: @escaping @Sendable () -> Void) {
        magnetometer.onChange = body
        accelerometer?.onChange = body
        level?.onChange = body
        deviation?.onChange = body
        online?.onChange = body
        driving?.onChange = body
    }

    /// Reloads every file; returns what was rejected (`reason; the mounting level in force is unchanged`),
    /// empty when nothing was.
    @discardableResult
    public func reload(reason: String) -> [String] {
        var rejected: [String] = []
        func load<C>(_ store: CalibrationFileStore<C>?) {
            if let why = store?.reload(reason: reason) { rejected.append("\(why); the \(C.kind) in force is unchanged") }
        }
        load(magnetometer)
        load(accelerometer)
        load(level)
        load(deviation)
        load(online)
        load(driving)
        return rejected
    }

    /// What the CALIBRATION object reports.
    public var status: CalibrationStatus {
        let m = magnetometer.state
        var status = CalibrationStatus(file: m.file, record: m.record, loaded: m.loaded, error: m.error,
                                       accelerometer: accelerometer?.state, level: level?.state)
        status.onlineError = online?.state.error
        if activeMagnetometer?.origin == .auto { status.onlineKept = online?.current?.time }
        status.deviation = deviation?.state
        status.driving = driving?.state
        return status
    }

    /// The magnetometer calibration to put in force: the online calibration kept from an earlier run while
    /// it was learnt on top of the calibration file in force (its `baseline`), else the file's.
    public var activeMagnetometer: ActiveCalibration? {
        let manual = magnetometer.current
        guard let kept = online?.current, kept.baseline == manual?.time, let correction = try? kept.calibration() else { return manual?.active }
        return ActiveCalibration(chip: kept.chip ?? manual?.chip ?? "", correction: correction, origin: .auto, field: kept.field, fieldWMM: kept.fieldWMM,
                                 fieldFallback: kept.fieldFallback)
    }
}
