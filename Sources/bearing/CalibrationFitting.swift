import BearingDaemon
import BearingTerminal
import BearingSimulator
import BearingSensors
import BearingCalibration
import BearingAttitude
import BearingModel
import BearingWire
import BearingPOSIX
import BearingMQTT
import BearingConfig
import BearingService
import BearingLog
import BearingGPSD
import BearingPublishing
import BearingMarine

/// A fit and what it was scaled to.
struct FittedCalibration {
    var fit: CalibrationFit
    /// `given` (--field), `wmm` (the WMM2025 total intensity at `position`) or `fit` (the fitted radius).
    var fieldSource: String
    /// Where the WMM was asked (`--position`, else the daemon's fix, else `heading.fallback_position`).
    var position: Vector3?
}

/// Step 2 of `calibrate`: the fit (`MagnetometerCalibrator`), with the model and field the options ask for.
struct CalibrationFitting {
    /// `--model`: this model only.
    var model: CalibrationModel?
    /// `--field` (µT).
    var field: Double?
    /// `--position`.
    var position: Vector3?
    /// The config's `heading.fallback_position`.
    var fallbackPosition: Vector3?
    /// The board's mounting: tells the fit which way is down in the chip's axes.
    var orientation: Orientation

    init(model: CalibrationModel?, field: Double?, position: Vector3?, config: AgentConfig) {
        self.model = model
        self.field = field
        self.position = position
        fallbackPosition = config.heading.fallbackPosition
        orientation = config.magnetometer.orientation
    }

    /// The calibrator the live display fits with while samples arrive (no position yet).
    var preview: MagnetometerCalibrator { calibrator(position: nil, microtesla: true) }

    /// The calibrator for these options; the WMM field (µT) is the target only for samples in µT.
    func calibrator(position: Vector3?, microtesla: Bool) -> MagnetometerCalibrator {
        var options = MagnetometerCalibrator.Options(model: model)
        options.down = orientation.matrix.transposed * Vector3(0, 0, 1)
        if let position {
            let year = WorldMagneticModel.decimalYear(unixSeconds: GPSTimestamp.now().unixTime)
            let f = WorldMagneticModel.wmm2025.field(latitude: position.x, longitude: position.y, heightKm: position.z, year: year)
            options.inclination = f.inclination
            if microtesla { options.field = f.totalIntensity / 1000 }
        }
        if let field { options.field = field }
        return MagnetometerCalibrator(options: options)
    }

    func fit(_ samples: CalibrationSamples) throws -> FittedCalibration {
        let at = position ?? samples.position ?? fallbackPosition
        let calibrator = calibrator(position: at, microtesla: samples.units == CalibrationRecord.microtesla)
        let fit: CalibrationFit
        do { fit = try calibrator.fit(samples.raw) } catch { throw CalibrateError(error.message) }
        let fieldSource = field != nil ? "given" : (calibrator.options.field != nil ? "wmm" : "fit")
        return FittedCalibration(fit: fit, fieldSource: fieldSource, position: at)
    }
}
