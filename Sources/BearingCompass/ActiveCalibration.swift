import BearingCalibration
import BearingOnlineCalibration
import BearingModel

/// The correction in force for one chip (a calibration is fitted in one chip's axes).
public struct ActiveCalibration: Equatable, Sendable {
    public var chip: String
    public var correction: MagneticCalibration
    /// Fitted by `bearing calibrate` (manual) or learnt online and kept (auto).
    public var origin: CalibrationOrigin
    public init(chip: String, correction: MagneticCalibration, origin: CalibrationOrigin = .manual) {
        self.chip = chip
        self.correction = correction
        self.origin = origin
    }
}
