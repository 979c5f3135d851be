import BearingAttitude
import BearingDaemon
import BearingModel
import BearingOnlineCalibration
import BearingSimulator
import Foundation
import Synchronization
import TestSupport

/// A value of the board's that a test sets while the daemon reads it (its heading, a magnet near it, the wall clock's
/// offset): a board profile that reads it moves the board.
public final class Setting<Value: Sendable>: Sendable {
    private let current: Mutex<Value>
    public init(_ value: Value) { current = Mutex(value) }
    public var value: Value { current.withLock { $0 } }
    public func set(_ value: Value) { current.withLock { $0 = value } }
}

/// The board of the tests that bring a magnet near a running daemon: still at 100° magnetic, no iron of its own, in
/// WMM2025's field at the rig's fallback position now (`DaemonRig.fallback`), the LSM6DSOX and QMC5883L answering on a
/// bus of its own (`DaemonRig`'s `openBus`), with `magnet` (ENU, µT) added to the Earth's field while the test sets it.
public struct MagnetBoard: Sendable {
    /// The board's heading, magnetic.
    public static let heading = 100.0
    public let field: LocalField
    public let magnet = Setting(Vector3.zero)
    public let bus: SimulatedI2CBus

    public init() {
        field = DaemonRig.fallbackField()
        var board = VirtualIMU(heading: { _ in Self.heading })
        let magnet = self.magnet
        board.disturbance = { _ in magnet.value }
        bus = boardBus(board, field: field, imu: "lsm6dsox", magnetometer: "qmc5883l")
    }

    /// Writes, at `config`'s online calibration file, the calibration an earlier run kept for this board (no iron,
    /// WMM's field): in force from the start, so that the field is judged against it at once.
    public func keepCalibration(for config: AgentConfig) {
        let kept = OnlineMagnetometerCalibration(calibration: .identity, origin: .auto, field: field.reference.norm)
        let record = OnlineCalibrationRecord(state: OnlineCalibrationState(kept, mode: .track, time: .now(), wmm: field.reference),
                                             chip: "qmc5883l", sensor: nil, baseline: nil, time: GPSTimestamp.now().iso8601)
        try? Data(record.encoded()).write(to: URL(fileURLWithPath: config.autoCalibrationPath))
    }
}

extension DaemonRig {
    /// WMM2025's field at sea level at a place (degrees) on the date of `unixSeconds` (now if nil), worked out here from the model
    /// itself (not through the daemon's fallback stage): the truth a test judges the daemon's declination and heading by.
    public static func wmmField(latitude: Double, longitude: Double, unixSeconds: Double? = nil,
                                source: DeclinationSource = .fallback) -> LocalField {
        LocalField.wmm(.wmm2025, latitude: latitude, longitude: longitude, heightKm: 0,
                       year: WorldMagneticModel.decimalYear(unixSeconds: unixSeconds ?? GPSTimestamp.now().unixTime), source: source)
    }

    /// WMM2025's field at `fallback` now: the field the daemon takes without a fix, and the truth its heading is judged by.
    public static func fallbackField() -> LocalField { wmmField(latitude: fallback.x, longitude: fallback.y) }
}

extension NMEATrack {
    /// WMM2025's field at the track's first fix on its date: the field the daemon takes once gpsd replays the track.
    public var firstFixField: LocalField {
        let first = epochs.first { $0.mode >= .twoD }!
        return DaemonRig.wmmField(latitude: first.latitude, longitude: first.longitude, unixSeconds: epochs[0].time.unixTime, source: .fix)
    }
}
