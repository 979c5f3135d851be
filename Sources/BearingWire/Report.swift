import BearingModel
/// An object gpsd sent that Bearing relays as it came (ATT, GST, PPS, TOFF): its class, its fields in
/// gpsd's order, and gpsd's own line, which is published verbatim unless a `fields` operator trims it.
public struct RelayedObject: Equatable, Sendable {
    public var stream: StreamClass
    public var object: JSONValue
    public var line: String

    /// Reads one gpsd line of a relayed class; nil when it is not a JSON object of that class.
    public init?(line: String) {
        guard let object = try? JSONValue.parse(line), case .string(let c)? = object["class"],
              let stream = StreamClass(rawValue: c), stream != .tpv, stream != .sky else { return nil }
        self.stream = stream
        self.object = object
        self.line = line
    }

    public var device: String? { object["device"]?.string }

    /// `time`, else PPS/TOFF's `real_sec`/`real_nsec`; nil when they are out of range (gpsd's numbers are
    /// converted only within bounds: a stray 1e300 must not trap).
    public var time: GPSTimestamp? {
        if let t = object["time"]?.string { return GPSTimestamp(iso8601: t) }
        if let s = object["real_sec"]?.number, let n = object["real_nsec"]?.number, abs(s) < 1e15, (0..<1e9).contains(n) {
            return GPSTimestamp(seconds: Int64(s), nanoseconds: Int32(n))
        }
        return nil
    }
}

/// One value on its way to readers, as the operator chains see it: a typed value (or a relayed gpsd
/// object), the fields a `fields` operator kept, and its encoded line, written once however many chains
/// and clients pass it on.
///
/// Reports live on the pipeline queue: they are made there, flow through the chains there, and only
/// their `line` (a String) leaves it.
/// Unchecked Sendable: the line cache is written only on the pipeline queue, where reports live (a lock
/// would cost every delivery of every line).
public final class Report: @unchecked Sendable {
    public enum Payload: Equatable, Sendable {
        case fix(GPSFix)
        case sky(SkyView)
        case attitude(Attitude)
        case relayed(RelayedObject)
    }

    public let payload: Payload
    /// Fields kept by a `fields` operator (nil: all).
    public let keep: Set<String>?
    private var cachedLine: String?

    public init(_ payload: Payload, keep: Set<String>? = nil) {
        self.payload = payload
        self.keep = keep
    }

    public var stream: StreamClass {
        switch payload {
        case .fix: return .tpv
        case .sky: return .sky
        case .attitude: return .att
        case .relayed(let r): return r.stream
        }
    }

    /// The gpsd JSON line (no newline).
    public var line: String {
        if let cachedLine { return cachedLine }
        let l = WireEncoding.encode(payload, keep: keep)
        cachedLine = l
        return l
    }

    /// The line an MQTT message carries: numbered `seq` right after `class` (written afresh, not cached).
    public func line(seq: UInt64) -> String { WireEncoding.encode(payload, keep: keep, seq: seq) }

    /// `line(seq:)`'s bytes appended to `out`, made once (the MQTT spool writes them into its line).
    public func appendLine(seq: UInt64, to out: inout [UInt8]) { WireEncoding.encode(payload, keep: keep, seq: seq, appendingTo: &out) }

    public var time: GPSTimestamp? {
        switch payload {
        case .fix(let f): return f.time
        case .sky(let s): return s.time
        case .attitude(let a): return a.time
        case .relayed(let r): return r.time
        }
    }

    public var device: String? {
        switch payload {
        case .fix(let f): return f.device
        case .sky(let s): return s.device
        case .attitude(let a): return a.device
        case .relayed(let r): return r.device
        }
    }

    public var fix: GPSFix? { if case .fix(let f) = payload { return f }; return nil }

    /// A numeric field by its wire name, as the reader would see it.
    public func number(_ field: String) -> Double? {
        switch payload {
        case .fix(let f): return WireSchema.number(field, of: f)
        case .sky(let s): return WireSchema.number(field, of: s)
        case .attitude(let a): return WireSchema.number(field, of: a)
        case .relayed(let r): return r.object[field]?.number
        }
    }

    /// The direction a `deadband` in degrees follows: ATT `heading` (else `mheading`, else `yaw`), TPV `track`.
    public var direction: Double? {
        switch stream {
        case .tpv: return number("track")
        case .att: return number("heading") ?? number("mheading") ?? number("yaw")
        default: return nil
        }
    }

    /// The same value with fewer fields.
    public func keeping(_ fields: [String]) -> Report {
        var set = Set(fields)
        if let keep { set.formIntersection(keep) }
        return Report(payload, keep: set)
    }

    /// Equal values and projections (what `dedupe` compares).
    public func sameValue(as other: Report) -> Bool { payload == other.payload && keep == other.keep }
}
