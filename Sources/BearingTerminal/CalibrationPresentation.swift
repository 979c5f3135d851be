import BearingCalibrationWorkflow
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where progress goes: the terminal (redrawn in place), or plain lines when not a terminal. With
/// --json it goes to stderr, leaving stdout to the JSON object.
public final class Progress: CollectionProgress {
    public let stream: UnsafeMutablePointer<FILE>
    public let live: Bool
    private var drawn = 0

    public init(json: Bool, plain: Bool) {
        stream = json ? Syscall.standardError : Syscall.standardOutput
        live = !plain && isatty(fileno(stream)) == 1
    }

    public func note(_ text: String) {
        fputs(text + "\n", stream)
        fflush(stream)
    }

    /// Replaces the previous frame (terminal) or prints one line (plain).
    public func frame(_ lines: [String], plainLine: String) {
        if live {
            var out = drawn > 0 ? "\u{1B}[\(drawn)A\u{1B}[J" : ""
            out += lines.joined(separator: "\n") + "\n"
            fputs(out, stream)
            drawn = lines.count
        } else {
            fputs(plainLine + "\n", stream)
        }
        fflush(stream)
    }

    /// One frame of the collection: status, coverage bar, the map of the sphere's regions, the figures of
    /// the latest fit and a hint for the biggest gap.
    public func collecting(samples count: Int, fit: CalibrationFit?, status: String, elapsed: Double, timeout: Double,
                    orientation: Orientation, southern: Bool) {
        let counts = fit?.regionCounts ?? Array(repeating: 0, count: SphereRegions.count)
        let covered = counts.filter { $0 >= 3 }.count
        let hint = fit == nil ? "turn it slowly through a full circle, then tilt and roll it" :
            CalibrationGuide.hint(regionCounts: counts, orientation: orientation, southernHemisphere: southern)
        let figures = fit.map { Self.figures($0.figures) + " (\($0.model.rawValue))" } ?? "figures after 30 samples"
        var lines = ["\(status)",
                     "coverage \(CoverageDisplay.bar(Double(covered), total: 100)) \(covered)/100 regions  \(count) samples  \(Int(elapsed)) s of \(Int(timeout))"]
        lines += CoverageDisplay.map(regionCounts: counts)
        lines.append(figures)
        lines.append("hint: \(hint)")
        let plain = String(printf: "%4.0f s  %d samples  regions %d/100  ", elapsed, count, covered) + figures + "  hint: \(hint)"
        frame(lines, plainLine: plain)
    }

    /// The figures with ✓/✗ against MotionCal's bar.
    public static func figures(_ f: CalibrationFigures) -> String {
        func mark(_ ok: Bool) -> String { ok ? "✓" : "✗" }
        let heading = f.headingError.isFinite ? String(printf: "≈%.2f°", f.headingError) : "n/a (too few samples)"
        return String(printf: "gaps %.1f %@  variance %.2f%% %@  wobble %.2f%% %@  fit error %.2f%% %@  heading error %@",
                      f.gaps, mark(f.gaps < CalibrationFigures.maximumGaps), f.variance, mark(f.variance < CalibrationFigures.maximumVariance),
                      f.wobble, mark(f.wobble < CalibrationFigures.maximumWobble), f.fitError, mark(f.fitError < CalibrationFigures.maximumFitError),
                      heading)
    }
}

/// Step 5 of `calibrate`: the result, as a readable summary on stdout or (`--json`) one JSON object.
public struct CalibrationReport: FitReport {
    public var fitted: FittedCalibration
    public var samples: CalibrationSamples
    public var saved: String?
    public var notSaved: String?
    /// The daemon's answer to the reload request.
    public var daemon: String?

    public init(fitted: FittedCalibration, samples: CalibrationSamples, saved: String?, notSaved: String?, daemon: String?) {
        self.fitted = fitted
        self.samples = samples
        self.saved = saved
        self.notSaved = notSaved
        self.daemon = daemon
    }


    /// The `--json` object. Encoded with JSONEncoder, which writes the shortest digits that read back
    /// exactly (JSONSerialization rounds to 15).
    struct Result: Encodable {
        var `class` = "CALIBRATION_RESULT"
        var model: String
        var offset: [Double]
        var matrix: [[Double]]
        var field: Double
        var field_source: String
        @WrittenAsNull var units: String?
        @WrittenAsNull var chip: String?
        @WrittenAsNull var device: String?
        var source: String
        var samples, used, outliers: Int
        var radii: [Double]
        /// The calibration file's figures (`heading_error` left out when there were too few samples).
        var figures: CalibrationRecord.Figures
        var passes: Bool
        var failures, warnings: [String]
        @WrittenAsNull var saved: String?
        @WrittenAsNull var not_saved: String?
        @WrittenAsNull var daemon: String?
    }

    var result: Result {
        let fit = fitted.fit
        let c = fit.calibration
        return Result(
            model: fit.model.rawValue, offset: [c.offset.x, c.offset.y, c.offset.z], matrix: c.matrix.rows.map { [$0.x, $0.y, $0.z] },
            field: fit.field, field_source: fitted.fieldSource, units: samples.units, chip: samples.chip, device: samples.device,
            source: samples.source, samples: fit.samples, used: fit.used, outliers: fit.outliers, radii: fit.radii,
            figures: CalibrationRecord.Figures(fit.figures), passes: fit.figures.passes, failures: fit.figures.failures,
            warnings: fit.warnings, saved: saved, not_saved: notSaved, daemon: daemon)
    }

    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(result)) ?? Data("{}".utf8), as: UTF8.self)
    }

    public var summary: String {
        let fit = fitted.fit
        let units = samples.units
        let u = units == CalibrationRecord.microtesla ? " µT" : (units.map { " \($0)" } ?? "")
        let c = fit.calibration
        var lines: [String] = []
        lines.append("calibration: \(fit.model.rawValue) fit to \(fit.used) of \(fit.samples) samples (\(fit.outliers) outliers)" + (samples.chip.map { ", chip \($0)" } ?? ""))
        lines.append(String(printf: "  offset  (%.4g, %.4g, %.4g)%@", c.offset.x, c.offset.y, c.offset.z, u))
        for (i, r) in c.matrix.rows.enumerated() {
            lines.append(String(printf: "  %@  [%9.5g %9.5g %9.5g]", i == 0 ? "matrix" : "      ", r.x, r.y, r.z))
        }
        let fieldText: String
        switch fitted.fieldSource {
        case "wmm": fieldText = fitted.position.map { String(printf: "WMM2025 at %.4f, %.4f", $0.x, $0.y) } ?? "WMM2025"
        case "given": fieldText = "--field"
        default: fieldText = units == CalibrationRecord.microtesla ? "the fitted radius; give --position for the WMM field" : "the fitted radius, in the samples' units"
        }
        lines.append(String(printf: "  field   %.4g%@ (%@)", fit.field, u, fieldText))
        lines.append("  " + Progress.figures(fit.figures))
        for w in fit.warnings { lines.append("  warning: \(w)") }
        return lines.joined(separator: "\n")
    }
}

/// A fit's result as calibrate and `calibrate --accel` print it: the summary and where it went, or (`--json`)
/// one JSON object.
public protocol FitReport {
    var summary: String { get }
    var jsonText: String { get }
    var saved: String? { get }
    var notSaved: String? { get }
    var daemon: String? { get }
}

extension FitReport {
    public func print(json: Bool) {
        Swift.print(json ? jsonText : ([summary] + CalibrationSaving.outcomeLines(saved: saved, notSaved: notSaved, daemon: daemon)).joined(separator: "\n"))
    }
}
