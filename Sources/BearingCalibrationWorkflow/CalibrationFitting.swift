import BearingSensors
import BearingCalibration
import BearingAttitude
import BearingModel
import BearingPOSIX

/// A fit and what it was scaled to.
public struct FittedCalibration {
    public var fit: CalibrationFit
    /// `given` (--field), `wmm` (the WMM2025 total intensity at `position`) or `fit` (the fitted radius).
    public var fieldSource: String
    /// Where the WMM was asked (`--position`, else the daemon's fix, else `heading.fallback_position`).
    public var position: Vector3?
}

/// Step 2 of `calibrate`: the fit (`MagnetometerCalibrator`), with the model and field the options ask for.
public struct CalibrationFitting {
    /// `--model`: this model only.
    public var model: CalibrationModel?
    /// `--field` (µT).
    public var field: Double?
    /// `--position`.
    public var position: Vector3?
    /// The config's `heading.fallback_position`.
    public var fallbackPosition: Vector3?
    /// The board's mounting: tells the fit which way is down in the chip's axes.
    public var orientation: Orientation

    /// `heading` gives the fallback position; `orientation` is the magnetometer's mounting.
    public init(model: CalibrationModel?, field: Double?, position: Vector3?, heading: HeadingConfig, orientation: Orientation) {
        self.model = model
        self.field = field
        self.position = position
        fallbackPosition = heading.fallbackPosition
        self.orientation = orientation
    }

    /// The calibrator the live display fits with while samples arrive (no position yet).
    public var preview: MagnetometerCalibrator { calibrator(position: nil, microtesla: true) }

    /// The calibrator for these options; the WMM field (µT) is the target only for samples in µT.
    public func calibrator(position: Vector3?, microtesla: Bool) -> MagnetometerCalibrator {
        var options = MagnetometerCalibrator.Options(model: model)
        options.down = orientation.matrix.transposed * Vector3(0, 0, 1)
        if let position {
            let wmm = WorldMagneticModel.wmm2025
            let year = wmm.heldYear(WorldMagneticModel.decimalYear(unixSeconds: GPSTimestamp.now().unixTime))
            let f = wmm.field(latitude: position.x, longitude: position.y, heightKm: position.z, year: year)
            options.inclination = f.inclination
            if microtesla { options.field = f.totalIntensity / 1000 }
        }
        if let field { options.field = field }
        return MagnetometerCalibrator(options: options)
    }

    public func fit(_ samples: CalibrationSamples) throws -> FittedCalibration {
        let at = position ?? samples.position ?? fallbackPosition
        let calibrator = calibrator(position: at, microtesla: samples.units == CalibrationRecord.microtesla)
        let fit: CalibrationFit
        do { fit = try calibrator.fit(samples.raw) } catch { throw CalibrateError(error.message) }
        let fieldSource = field != nil ? "given" : (calibrator.options.field != nil ? "wmm" : "fit")
        return FittedCalibration(fit: fit, fieldSource: fieldSource, position: at)
    }
}
