import BearingCalibration
import BearingOnlineCalibration
import BearingModel

/// The correction in force for one chip (a calibration is fitted in one chip's axes).
public struct ActiveCalibration: Equatable, Sendable {
    public var chip: String
    public var correction: MagneticCalibration
    /// Fitted by `bearing calibrate` (manual) or learnt online and kept (auto).
    public var origin: CalibrationOrigin
    /// The field magnitude the correction scales the field to (µT, its file's `field`): WMM's where it was fitted, or
    /// the fitted radius where none was known (a fit before the first fix). nil when not known (an accelerometer's).
    public var field: Double?
    /// WMM's magnitude where `field` held (the kept online file's `field_wmm`; a manual one's `field` where WMM's
    /// was what it scaled to); nil when not known.
    public var fieldWMM: Double?
    /// WMM's magnitude at the fallback position where `field` held, learnt before any fix (the kept online file's
    /// `field_fallback`); nil when not.
    public var fieldFallback: Double?
    public init(chip: String, correction: MagneticCalibration, origin: CalibrationOrigin = .manual, field: Double? = nil, fieldWMM: Double? = nil,
                fieldFallback: Double? = nil) {
        self.chip = chip
        self.correction = correction
        self.origin = origin
        self.field = field
        self.fieldWMM = fieldWMM
        self.fieldFallback = fieldFallback
    }
}
