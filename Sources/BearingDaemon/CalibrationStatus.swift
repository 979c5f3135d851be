import BearingModel
import BearingCalibration
import BearingOnlineCalibration
import BearingWire
import BearingCompass

extension WireEncoding {
    /// `CALIBRATION`: which magnetometer calibration is in force and its figures; with an IMU, the
    /// accelerometer calibration, the mounting level and the deviation curve in force as `accelerometer`, `level`
    /// and `deviation` objects.
    public static func calibration(_ c: CalibrationStatus) -> String {
        var w = JSONObjectWriter(class: "CALIBRATION")
        w.string("status", c.record == nil ? "none" : "active")
        w.string("file", c.file)
        if let r = c.record {
            w.string("chip", r.chip)
            w.string("model", r.model.rawValue)
            w.string("fitted", r.time)
            w.time("loaded", c.loaded)
            w.raw("offset", numbers(r.offset))
            w.raw("matrix", "[" + r.matrix.map(numbers).joined(separator: ",") + "]")
            w.number("field", r.field)
            w.string("field_source", r.fieldSource)
            w.number("gaps", r.figures.gaps)
            w.number("variance", r.figures.variance)
            w.number("wobble", r.figures.wobble)
            w.number("fit_error", r.figures.fitError)
            w.number("heading_error", r.figures.headingError)
            w.int("samples", r.samples)
        }
        if let error = c.error { w.string("error", error) }
        if let a = c.accelerometer {
            var o = fileState(a)
            if let r = a.record {
                o.string("chip", r.chip)
                o.string("model", r.model.rawValue)
                o.string("fitted", r.time)
                o.time("loaded", a.loaded)
                o.raw("offset", numbers(r.offset))
                o.raw("matrix", "[" + r.matrix.map(numbers).joined(separator: ",") + "]")
                o.int("poses", r.figures.poses)
                o.number("residual_mg", r.figures.residualMilliG)
                o.number("worst_mg", r.figures.worstMilliG)
            }
            if let error = a.error { o.string("error", error) }
            w.raw("accelerometer", o.finished())
        }
        if c.onlineMode != .off {
            var o = JSONObjectWriter()
            o.string("mode", c.onlineMode.rawValue)
            if c.online == nil { o.string("source", c.onlineSource.rawValue) }
            if let s = c.online {
                o.string("source", s.origin.rawValue)
                o.string("quality", s.quality)
                o.bool("learning", s.learning)
                o.int("regions", s.regions)
                o.int("steps", s.steps)
                if let r = s.residual { o.number("residual", r) }
                if let m = s.misfit {
                    o.number("misfit_percent", m.normPercent)
                    o.number("dip_spread", m.dipDegrees)
                    o.number("dip", m.meanDip)
                }
                if let f = s.field { o.number("field", f) }
                if let w = s.wmm {
                    o.number("field_wmm", w.norm)
                    o.number("dip_wmm", w.dip)
                }
                if let i = s.interference { o.string("interference", i.rawValue) }
                if let e = s.ongoing, let seconds = s.interferenceSeconds, let since = s.interferenceSince {
                    o.number("interference_seconds", seconds)
                    // Since when, in the samples' time: stays true after the object was published.
                    o.time("interference_since", since)
                    o.number("interference_norm", e.largestNorm)
                    o.number("interference_dip", e.largestDip)
                }
                if let changed = s.changed { o.time("changed", changed) }
                if let kept = c.onlineKept { o.string("kept", kept) }
                if s.origin != .none {
                    o.raw("offset", numbers([s.calibration.offset.x, s.calibration.offset.y, s.calibration.offset.z]))
                    o.raw("matrix", "[" + s.calibration.matrix.rows.map { numbers([$0.x, $0.y, $0.z]) }.joined(separator: ",") + "]")
                }
            }
            if let d = c.detail {
                o.raw("points", "[" + d.points.map { numbers([$0.x, $0.y, $0.z], decimals: 2) }.joined(separator: ",") + "]")
                o.raw("history", "[" + d.history.map(event).joined(separator: ",") + "]")
            }
            if let e = c.onlineError { o.string("error", e) }
            w.raw("online", o.finished())
        }
        if let l = c.level {
            var o = fileState(l)
            if let r = l.record {
                o.number("roll", r.roll)
                o.number("pitch", r.pitch)
                o.number("tilt", r.tilt)
                o.string("measured", r.time)
                o.time("loaded", l.loaded)
            }
            if let error = l.error { o.string("error", error) }
            w.raw("level", o.finished())
        }
        if let d = c.deviation {
            var o = fileState(d)
            if let r = d.record {
                o.raw("coefficients", numbers(r.coefficients))
                if let u = r.uncertainties { o.raw("uncertainties", numbers(u)) }
                o.string("source", r.source)
                if let current = r.current { o.raw("current", numbers(current)) }
                o.string("measured", r.time)
                o.time("loaded", d.loaded)
            }
            if let error = d.error { o.string("error", error) }
            w.raw("deviation", o.finished())
        }
        if let d = c.driving {
            var o = fileState(d)
            if let r = d.record {
                o.string("kept", r.time)
                o.int("sectors", r.sectors.filter { !$0.isEmpty }.count)
                if let f = r.forward { o.raw("forward", numbers(f, decimals: 3)) }
                if let u = r.up { o.raw("up", numbers(u, decimals: 3)) }
                if c.detail != nil {
                    o.raw("observations", "[" + r.sectors.joined().map { numbers($0, decimals: 2) }.joined(separator: ",") + "]")
                }
                o.time("loaded", d.loaded)
            }
            if let error = d.error { o.string("error", error) }
            w.raw("driving", o.finished())
        }
        if let d = c.detail {
            var o = JSONObjectWriter()
            o.string("source", d.curve?.source ?? "none")
            o.raw("points", "[" + (d.curve?.points ?? []).map { numbers([$0.compass, $0.deviation], decimals: 2) }.joined(separator: ",") + "]")
            w.raw("curve", o.finished())
            if !d.observations.isEmpty {
                w.raw("observations", "[" + d.observations.map { numbers([$0.compass, $0.deviation], decimals: 2) }.joined(separator: ",") + "]")
            }
        }
        return w.finished()
    }

    private static func event(_ e: OnlineCalibrationEvent) -> String {
        var o = JSONObjectWriter()
        o.time("time", e.time)
        o.string("event", e.kind.rawValue)
        if let b = e.before { o.fixed("misfit_before", b, 3) }
        if let a = e.after { o.fixed("misfit_after", a, 3) }
        o.int("regions", e.regions)
        return o.finished()
    }

    private static func fileState<Record>(_ s: CalibrationFileState<Record>) -> JSONObjectWriter {
        var o = JSONObjectWriter()
        o.string("status", s.record == nil ? "none" : "active")
        o.string("file", s.file)
        return o
    }

    private static func numbers(_ values: [Double]) -> String {
        "[" + values.map(JSONObjectWriter.shortest).joined(separator: ",") + "]"
    }

    private static func numbers(_ values: [Double], decimals: Int) -> String {
        "[" + values.map { $0.isFinite ? String(printf: "%.\(decimals)f", $0) : "null" }.joined(separator: ",") + "]"
    }
}

/// What the `CALIBRATION` object reports: the magnetometer's calibration file, and with an IMU the
/// accelerometer calibration and mounting level files.
public struct CalibrationStatus: Equatable, Sendable {
    public var file: String
    public var record: CalibrationRecord?
    public var loaded: GPSTimestamp?
    /// Why the last load was rejected, if it was.
    public var error: String?
    public var accelerometer: CalibrationFileState<AccelerometerCalibrationRecord>?
    public var level: CalibrationFileState<MountingLevelRecord>?
    public var deviation: CalibrationFileState<DeviationRecord>?
    /// The deviation from driving kept by an earlier run, as read at start or on reload (a car or rover).
    public var driving: CalibrationFileState<DrivingDeviationRecord>?
    /// Online calibration: its state now (nil: off), and why its kept file was last rejected.
    public var online: OnlineCalibrationState?
    public var onlineMode: AutoCalibrationMode = .off
    /// Where the calibration in force came from, before online calibration has had anything to say.
    public var onlineSource: CalibrationOrigin = .none
    public var onlineError: String?
    /// When the kept online calibration in force was learnt (its file's `time`, as read at start or on reload; nil: no
    /// kept one in force).
    public var onlineKept: String?
    /// What `?CALIBRATION={"points":true};` adds (nil: the plain object).
    public var detail: CalibrationDetail?

    public init(file: String, record: CalibrationRecord? = nil, loaded: GPSTimestamp? = nil, error: String? = nil,
                accelerometer: CalibrationFileState<AccelerometerCalibrationRecord>? = nil, level: CalibrationFileState<MountingLevelRecord>? = nil) {
        self.file = file
        self.record = record
        self.loaded = loaded
        self.error = error
        self.accelerometer = accelerometer
        self.level = level
    }
}

/// One calibration file as the daemon holds it: what is in force from it, since when, and why the last
/// load was rejected, if it was.
public struct CalibrationFileState<Record: Equatable & Sendable>: Equatable, Sendable {
    public var file: String
    public var record: Record?
    public var loaded: GPSTimestamp?
    public var error: String?

    public init(file: String, record: Record? = nil, loaded: GPSTimestamp? = nil, error: String? = nil) {
        self.file = file
        self.record = record
        self.loaded = loaded
        self.error = error
    }
}

/// What the CALIBRATION object adds when a client asks for the points (`?CALIBRATION={"points":true};`): what
/// online calibration holds and did, the deviation curve in force, and the observations of the deviation from
/// driving (this run's; the kept file's are in `driving.observations`).
public struct CalibrationDetail: Equatable, Sendable {
    public struct CurvePoint: Equatable, Sendable {
        public var compass: Double
        public var deviation: Double
        public init(compass: Double, deviation: Double) { self.compass = compass; self.deviation = deviation }
    }
    /// Online calibration's raw points (µT, chip axes).
    public var points: [Vector3] = []
    public var history: [OnlineCalibrationEvent] = []
    /// The deviation in force every 10° of compass heading, and its source (`driving` or `swing`).
    public var curve: (source: String, points: [CurvePoint])?
    public var observations: [CurvePoint] = []

    public init() {}

    public static func == (a: Self, b: Self) -> Bool {
        a.points == b.points && a.history == b.history && a.curve?.source == b.curve?.source && a.curve?.points == b.curve?.points
            && a.observations == b.observations
    }
}
