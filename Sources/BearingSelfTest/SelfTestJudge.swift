import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// What a self-test read from one sensor: how it was configured, how the reads went and what it read while the
/// board lay still. Filled by the runner (BearingCalibrationWorkflow's `SelfTestRun`); judged here, without I/O.
public struct SensorRun: Sendable {
    public enum Kind: String, Sendable { case magnetometer, imu }
    public var kind: Kind
    /// Driver name (`qmc5883l`) and the name to show (`QMC5883L`).
    public var chip: String
    public var display: String
    /// `i2c:/dev/i2c-1:0x0d`.
    public var endpoint: String
    public var configuredRate: Double
    /// Full scale as configured: µT for the field, m/s² and rad/s for the IMU.
    public var fieldRange: Double?
    public var accelerationRange: Double?
    public var angularRateRange: Double?
    /// Reads tried, those that failed on the bus (each failure retried once at most) and those whose data never
    /// came (data-ready not set within the driver's polls), with the first of each.
    public var reads = 0
    public var failures = 0
    public var firstFailure: String?
    public var notReady = 0
    public var firstNotReady: String?
    /// Samples the driver flagged saturated (an overflow bit, a full-scale count).
    public var saturatedSamples = 0
    /// Configuration registers the driver wrote with a value other than 0 and read back: how many, how many kept it.
    public var readback: (written: Int, kept: Int)?
    /// Why the configuration was not read back (write-only control registers, the daemon owns the chip): no clone check.
    public var readbackUnavailable: String?
    /// Why the samples in hand have gaps that the chip did not make (the daemon's reader ran late, or this test
    /// read the daemon's socket too slowly and lost lines): the rate and the noise are then not the chip's to judge.
    public var gaps: String?
    public var field = RestSeries()
    public var acceleration = RestSeries()
    public var angularRate = RestSeries()

    public init(kind: Kind, chip: String, display: String, endpoint: String, configuredRate: Double) {
        self.kind = kind
        self.chip = chip
        self.display = display
        self.endpoint = endpoint
        self.configuredRate = configuredRate
    }
}

/// The verdicts, line by line. Bounds: the rate within 10 % (warn to 25 %), drifting under 5 %; no failed read
/// (warn under 1 %); noise within 3 times the datasheet's (warn to 6); gravity within 3 % of 1 g (warn to 10 %);
/// the gyroscope's bias within its datasheet zero-rate level; the field within 20 % of the WMM's and the dip within
/// 5° (a warning only: an uncalibrated hard iron moves both).
public enum SelfTestJudge {
    /// 1 g, m/s².
    public static let standardGravity = 9.80665
    /// The accelerometer's spread (its Allan deviation at 1 s, or its σ per sample) above which the board is taken to have moved (20 mg).
    public static let movedAcceleration = 0.02 * standardGravity
    static let movedFix = "the board moved during the test, so noise, bias and gravity are not judged: lay it still and run again"
    public static func judge(_ run: SensorRun) -> [SelfTestLine] {
        let name = run.kind == .magnetometer ? "magnetometer" : "imu"
        var lines: [SelfTestLine] = []
        lines.append(SelfTestLine(name, "chip", measured: "\(run.display) at \(run.endpoint)", expected: "an ID that matches", .pass))
        lines += errors(run, name)
        lines += readback(run, name)
        let series: [(String, RestSeries, Double?)] = run.kind == .magnetometer
            ? [("magnetometer", run.field, run.fieldRange)]
            : [("accelerometer", run.acceleration, run.accelerationRange), ("gyroscope", run.angularRate, run.angularRateRange)]
        guard let first = series.first?.1, first.values.count >= 10 else {
            lines.append(SelfTestLine(name, "samples", measured: "\(first_count(series)) read", expected: "at least 10 at rest", .fail,
                                      fix: (run.firstFailure ?? run.firstNotReady).map { "every read failed: \($0)" } ?? "the chip gave no data: check its power and wiring"))
            return lines
        }
        lines += rate(first, configured: run.configuredRate, sensor: name, gaps: run.gaps)
        var damaged = false
        for (sensor, s, range) in series {
            let stuck = stuckLine(s, range: range, sensor)
            let saturated = saturation(s, range: range, flagged: run.saturatedSamples, sensor: sensor)
            damaged = damaged || stuck?.verdict == .fail || saturated?.verdict == .fail
            lines += [stuck, saturated].compactMap { $0 }
        }
        if !damaged { lines += run.gaps == nil ? noise(run) : unevenNoise(run) }
        return lines
    }

    /// With gaps the chip did not make, the noise (an Allan deviation, which needs evenly spaced samples) is not
    /// judged. Whether the board lay still is judged by the accelerometer's spread instead (no accelerometer's white
    /// noise reaches 20 mg per sample); when it did, the gyroscope's bias and gravity, means over what came, still are.
    static func unevenNoise(_ run: SensorRun) -> [SelfTestLine] {
        let sensors = run.kind == .magnetometer ? ["magnetometer"] : ["accelerometer", "gyroscope"]
        var lines = sensors.map { SelfTestLine($0, "noise", measured: "samples missing", expected: "-", .warn, fix: "not judged: \(run.gaps ?? "")") }
        guard run.kind == .imu else { return lines }
        if let moved = moved(run, evenlySpaced: false) {
            lines.append(moved)
        } else {
            lines += means(run)
        }
        return lines
    }

    /// The `still` warning when the accelerometer says the board moved, nil when it lay still. No accelerometer has
    /// 20 mg of white noise over 1 s (its Allan deviation at 1 s, from evenly spaced samples) nor per sample (its σ,
    /// which needs no even spacing and no length: the fallback for gaps and for a run under 3 s).
    static func moved(_ run: SensorRun, evenlySpaced: Bool) -> SelfTestLine? {
        let a = run.acceleration
        let measured: String, spread: Double
        if evenlySpaced, let adev = a.allanDeviation(tau: 1) {
            spread = max(adev.x, adev.y, adev.z)
            measured = String(printf: "the accelerometer varied by %.0f mg over 1 s", spread / standardGravity * 1000)
        } else {
            let sd = a.deviation
            spread = max(sd.x, sd.y, sd.z)
            measured = String(printf: "the accelerometer varied by %.0f mg (σ)", spread / standardGravity * 1000)
        }
        guard spread > movedAcceleration else { return nil }
        return SelfTestLine("imu", "still", measured: measured, expected: "below 20 mg", .warn, fix: movedFix)
    }

    /// When the IMU saw the board move (its `still` line), the magnetometer's noise is the motion's too: a warning
    /// that says so, not a failure.
    public static func judgedTogether(_ lines: [SelfTestLine]) -> [SelfTestLine] {
        guard lines.contains(where: { $0.check == "still" && $0.verdict == .warn }) else { return lines }
        return lines.map { l in
            guard l.sensor == "magnetometer", l.check == "noise", l.verdict > .pass else { return l }
            var l = l
            l.verdict = .warn
            l.fix = "not judged: the board moved during the test; lay it still and run again"
            return l
        }
    }

    static func first_count(_ series: [(String, RestSeries, Double?)]) -> Int { series.first?.1.values.count ?? 0 }

    static func errors(_ run: SensorRun, _ sensor: String) -> [SelfTestLine] {
        guard run.reads > 0 else { return [] }
        func verdict(_ n: Int) -> SelfTestLine.Verdict { n == 0 ? .pass : Double(n) / Double(run.reads) < 0.01 ? .warn : .fail }
        let bus = verdict(run.failures), ready = verdict(run.notReady)
        var lines = [SelfTestLine(sensor, "i2c errors", measured: "\(run.failures) of \(run.reads) reads", expected: "none", bus,
                                  fix: bus == .pass ? nil : "bus errors (\(run.firstFailure ?? "?")): shorten the wires, check pull-ups and a shared ground; lower the bus clock (dtparam=i2c_arm_baudrate=50000)")]
        if run.notReady > 0 {
            lines.append(SelfTestLine(sensor, "data ready", measured: "not ready for \(run.notReady) of \(run.reads) reads", expected: "every read", ready,
                                      fix: "the chip did not convert (\(run.firstNotReady ?? "?")): it may not have taken its configuration, or be in standby"))
        }
        return lines
    }

    static func readback(_ run: SensorRun, _ sensor: String) -> [SelfTestLine] {
        if let why = run.readbackUnavailable {
            return [SelfTestLine(sensor, "registers", measured: "not read back: \(why)", expected: "-", .info)]
        }
        guard let r = run.readback, r.written > 0 else { return [] }
        let verdict: SelfTestLine.Verdict = r.kept == r.written ? .pass : r.kept == 0 ? .fail : .warn
        return [SelfTestLine(sensor, "registers", measured: "\(r.kept) of \(r.written) configuration writes kept", expected: "all",
                             verdict, fix: verdict == .fail
                                ? "it answers to the \(run.display)'s ID but keeps nothing written to its other registers: a clone or another chip; check the part number on the module"
                                : verdict == .warn ? "some configuration did not stick: a clone, or a chip in a state the driver does not expect" : nil)]
    }

    /// The rate against the configured one, and its drift between the halves; with `gaps` (samples missing that the
    /// chip did not make) a warning that it is not judged, what came shown.
    static func rate(_ s: RestSeries, configured: Double, sensor: String, gaps: String? = nil) -> [SelfTestLine] {
        if let gaps {
            return [SelfTestLine(sensor, "rate", measured: String(printf: "%.1f Hz seen", s.rate ?? 0), expected: String(printf: "%.1f Hz", configured),
                                 .warn, fix: "not judged: \(gaps); run the test again when the board is less busy (`top`)")]
        }
        guard let measured = s.rate else { return [] }
        let off = abs(measured / configured - 1)
        let verdict: SelfTestLine.Verdict = off <= 0.10 ? .pass : off <= 0.25 ? .warn : .fail
        var lines = [SelfTestLine(sensor, "rate", measured: String(printf: "%.1f Hz", measured), expected: String(printf: "%.1f Hz", configured),
                                  verdict, fix: verdict == .pass ? nil : measured < configured
                                    ? "the chip gives data more slowly than configured: a mis-clocked part, or a bus too slow for the rate; try a lower rate"
                                    : "the chip gives data faster than configured")]
        if let (a, b) = s.halves {
            let drift = abs(b / a - 1)
            lines.append(SelfTestLine(sensor, "rate drift", measured: String(printf: "%.1f → %.1f Hz", a, b), expected: "within 5 %",
                                      drift <= 0.05 ? .pass : .warn, fix: drift <= 0.05 ? nil : "the rate changes while it runs: another process on the bus, or a chip that stalls"))
        }
        return lines
    }

    static let axes = ["x", "y", "z"]

    /// An axis that never changes, unless it sits at the end of its range (that is `saturation`'s to name).
    static func stuckLine(_ s: RestSeries, range: Double?, _ sensor: String) -> SelfTestLine? {
        let stuck = s.stuckAxes.filter { axis in range.map { abs(RestSeries.component(s.values[0], axis)) < 0.98 * $0 } ?? true }
        guard !stuck.isEmpty else { return SelfTestLine(sensor, "stuck axis", measured: "none", expected: "every axis changes", .pass) }
        let names = stuck.map { axes[$0] }.joined(separator: ", ")
        let values = stuck.map { String(printf: "%@ %.3f", axes[$0], RestSeries.component(s.values[0], $0)) }.joined(separator: ", ")
        return SelfTestLine(sensor, "stuck axis", measured: "\(names) never changes (\(values))", expected: "every axis changes", .fail,
                            fix: stuck.count == 3 ? "no axis changes at all: the chip is not converting, or is not the chip it claims to be"
                                                  : "axis \(names) reads the same value every sample: a dead channel; replace the module")
    }

    static func saturation(_ s: RestSeries, range: Double?, flagged: Int, sensor: String) -> SelfTestLine? {
        var atEnd: [Int] = []
        if let range {
            atEnd = (0..<3).filter { axis in s.values.contains { abs(RestSeries.component($0, axis)) >= 0.98 * range } }
        }
        guard !atEnd.isEmpty || flagged > 0 else {
            return SelfTestLine(sensor, "saturated", measured: "no", expected: "within range", .pass)
        }
        let names = atEnd.map { axes[$0] }.joined(separator: ", ")
        let scale = range.map { String(printf: "±%.4g", $0) } ?? "its range"
        return SelfTestLine(sensor, "saturated", measured: atEnd.isEmpty ? "\(flagged) samples flagged" : "axis \(names) at the end of \(scale)",
                            expected: "within range", .fail,
                            fix: "a magnet or steel close to the chip, a range too small, or a broken channel: move the board away from speakers and magnets, or configure a larger range")
    }

    static func noise(_ run: SensorRun) -> [SelfTestLine] {
        let figures = DatasheetFigures.of(run.chip)
        switch run.kind {
        case .magnetometer:
            let sd = run.field.deviation, worst = max(sd.x, sd.y, sd.z)
            let adev = run.field.allanDeviation(tau: 1)
            let measured = String(printf: "σ %.3f µT", worst) + (adev.map { String(printf: ", Allan 1 s %.3f µT", max($0.x, $0.y, $0.z)) } ?? "")
            return [ratioLine("magnetometer", "noise", measured: measured, value: worst, spec: figures?.fieldNoise, unit: "µT", source: figures?.source)]
        case .imu:
            var lines: [SelfTestLine] = []
            let g = run.angularRate, a = run.acceleration
            // The board moving: nothing at rest is judged.
            if let moved = moved(run, evenlySpaced: true) { return [moved] }
            if let adev = g.allanDeviation(tau: 1) {
                let dps = max(adev.x, adev.y, adev.z) * 180 / .pi
                lines.append(ratioLine("gyroscope", "noise", measured: String(printf: "Allan 1 s %.4f °/s", dps), value: dps,
                                       spec: figures?.angularRateDensity, unit: "°/s/√Hz", source: figures?.source))
            }
            if let adev = a.allanDeviation(tau: 1) {
                let micro = max(adev.x, adev.y, adev.z) / SelfTestJudge.standardGravity * 1e6
                lines.append(ratioLine("accelerometer", "noise", measured: String(printf: "Allan 1 s %.0f µg", micro), value: micro,
                                       spec: figures?.accelerationDensity, unit: "µg/√Hz", source: figures?.source))
            }
            lines += means(run)
            return lines
        }
    }

    /// The gyroscope's bias and the accelerometer's gravity at rest: means over the samples, which need no even spacing.
    static func means(_ run: SensorRun) -> [SelfTestLine] {
        let figures = DatasheetFigures.of(run.chip)
        let g = run.angularRate, a = run.acceleration
        var lines: [SelfTestLine] = []
        if !g.values.isEmpty {
            let bias = g.mean * (180 / .pi), largest = max(abs(bias.x), abs(bias.y), abs(bias.z))
            let limit = figures?.zeroRate
            lines.append(SelfTestLine("gyroscope", "bias", measured: String(printf: "%.2f %.2f %.2f °/s", bias.x, bias.y, bias.z),
                                      expected: limit.map { String(printf: "within ±%.0f °/s", $0) } ?? "-",
                                      limit.map { largest <= $0 ? .pass : .warn } ?? .info,
                                      fix: limit.map { largest <= $0 } == false ? "large for this chip (the fusion learns a bias, but this one is out of the datasheet's range): was the board still?" : nil))
        }
        if !a.values.isEmpty {
            let norm = a.mean.length, off = abs(norm / SelfTestJudge.standardGravity - 1)
            let verdict: SelfTestLine.Verdict = off <= 0.03 ? .pass : off <= 0.10 ? .warn : .fail
            lines.append(SelfTestLine("accelerometer", "gravity", measured: String(printf: "|a| %.3f m/s²", norm), expected: "9.807 m/s² within 3 %",
                                      verdict, fix: verdict == .pass ? nil : "the accelerometer's scale is off: run `bearing calibrate --accel`; beyond 10 % check the range setting"))
        }
        return lines
    }

    static func ratioLine(_ sensor: String, _ check: String, measured: String, value: Double, spec: Double?, unit: String, source: String?) -> SelfTestLine {
        guard let spec else { return SelfTestLine(sensor, check, measured: measured, expected: "no datasheet figure", .info) }
        let ratio = value / spec
        let verdict: SelfTestLine.Verdict = ratio <= 3 ? .pass : ratio <= 6 ? .warn : .fail
        return SelfTestLine(sensor, check, measured: measured + String(printf: " (%.1f× the datasheet)", ratio),
                            expected: String(printf: "%.4g %@ (%@)", spec, unit, source ?? "datasheet"), verdict,
                            fix: verdict == .pass ? nil : "noisier than the datasheet by \(String(printf: "%.0f", ratio))×: a noisy supply, a motor or speaker nearby, or a poor clone; was the board still?")
    }

    /// The field at rest against the WMM's at the position: its magnitude, and its dip when the accelerometer gives
    /// "down" in the same (board) axes. Uncalibrated, a hard iron moves both, so a departure is a warning.
    public static func earthField(board field: Vector3, down: Vector3?, wmmTotal: Double, wmmDip: Double, calibrated: Bool) -> [SelfTestLine] {
        let norm = field.length
        let off = abs(norm / wmmTotal - 1)
        let hint = calibrated ? "interference nearby (steel, a motor, cables carrying current): move the board, or calibrate again"
                              : "uncalibrated: a hard iron changes it; run `bearing calibrate` and test again"
        var lines = [SelfTestLine("magnetometer", "field", measured: String(printf: "%.1f µT", norm), expected: String(printf: "%.1f µT (WMM) within 20 %%", wmmTotal),
                                  off <= 0.2 ? .pass : .warn, fix: off <= 0.2 ? nil : hint)]
        if let down, norm > 0 {
            let dip = asin(max(-1, min(1, field.dot(down.normalized) / norm))) * 180 / .pi
            let verdict: SelfTestLine.Verdict = abs(dip - wmmDip) <= 5 ? .pass : .warn
            lines.append(SelfTestLine("magnetometer", "dip", measured: String(printf: "%.1f°", dip), expected: String(printf: "%.1f° (WMM) within 5°", wmmDip),
                                      verdict, fix: verdict == .pass ? nil : abs(dip + wmmDip) <= 5
                                        ? "the dip has the wrong sign: the magnetometer's z axis (or the IMU's) is the other way round in the board profile"
                                        : hint))
        }
        return lines
    }
}
