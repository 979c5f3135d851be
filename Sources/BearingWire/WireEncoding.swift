import BearingModel
/// The one place Bearing's objects are written as gpsd JSON (protocol 3.14, as gpsd 3.22 speaks it);
/// `WireMessage` is its inverse.
///
/// Field names, units and decimal places follow gpsd's `json_tpv_dump`/`json_sky_dump` output, so
/// gpsd's own client libraries and tools parse what Bearing publishes. `STATE`, `OVERFLOW`, `MAG`,
/// `CALIBRATION` and `PIPELINES` are Bearing's own classes; gpsd clients skip classes they do not know.
/// `keep` (a `fields` operator) limits which fields are written; `class` always is.
public enum WireEncoding {
    public static let protocolMajor = 3
    public static let protocolMinor = 14

    public static func tpv(_ f: GPSFix, keep: Set<String>? = nil, seq: UInt64? = nil) -> String {
        tpvWriter(f, keep: keep, seq: seq).finished()
    }

    static func tpvWriter(_ f: GPSFix, keep: Set<String>?, seq: UInt64?) -> JSONObjectWriter {
        var w = JSONObjectWriter(class: "TPV", keep: keep, seq: seq)
        w.string("device", f.device)
        w.int("status", f.status)
        w.int("mode", f.mode.rawValue)
        w.time("time", f.time)
        w.fixed("ept", f.ept, 3)
        w.fixed("lat", f.latitude, 9)
        w.fixed("lon", f.longitude, 9)
        w.fixed("altHAE", f.altHAE, 4)
        w.fixed("altMSL", f.altMSL, 4)
        w.fixed("alt", f.altMSL, 4)
        w.fixed("epx", f.epx, 3)
        w.fixed("epy", f.epy, 3)
        w.fixed("epv", f.epv, 3)
        w.fixed("track", f.track, 4)
        w.fixed("magtrack", f.magneticTrack, 4)
        w.fixed("magvar", f.magneticVariation, 1)
        w.fixed("speed", f.speed, 3)
        w.fixed("climb", f.climb, 3)
        w.fixed("epd", f.epd, 4)
        w.fixed("eps", f.eps, 2)
        w.fixed("epc", f.epc, 2)
        w.fixed("geoidSep", f.geoidSeparation, 3)
        w.fixed("eph", f.eph, 3)
        w.fixed("sep", f.sep, 3)
        return w
    }

    public static func sky(_ s: SkyView, keep: Set<String>? = nil, seq: UInt64? = nil) -> String {
        skyWriter(s, keep: keep, seq: seq).finished()
    }

    static func skyWriter(_ s: SkyView, keep: Set<String>?, seq: UInt64?) -> JSONObjectWriter {
        var w = JSONObjectWriter(class: "SKY", keep: keep, seq: seq)
        w.string("device", s.device)
        w.time("time", s.time)
        w.fixed("xdop", s.xdop, 2)
        w.fixed("ydop", s.ydop, 2)
        w.fixed("vdop", s.vdop, 2)
        w.fixed("tdop", s.tdop, 2)
        w.fixed("hdop", s.hdop, 2)
        w.fixed("gdop", s.gdop, 2)
        w.fixed("pdop", s.pdop, 2)
        w.int("nSat", s.satellites?.count)
        w.int("uSat", s.usedCount)
        // A SKY of DOPs only has no list, as gpsd writes it: an empty one would say no satellite is seen.
        guard let satellites = s.satellites else { return w }
        if let keep, !keep.contains("satellites") { return w }
        var list = "["
        for (i, sat) in satellites.enumerated() {
            if i > 0 { list += "," }
            var o = JSONObjectWriter()
            o.int("PRN", sat.prn)
            o.fixed("el", sat.elevation, 1)
            o.fixed("az", sat.azimuth, 1)
            o.fixed("ss", sat.signalStrength, 1)
            o.bool("used", sat.used)
            o.int("gnssid", sat.gnssID)
            o.int("svid", sat.svID)
            list += o.finished()
        }
        list += "]"
        w.raw("satellites", list)
        return w
    }

    /// gpsd's `ATT` object for a compass: `heading` (true) and `mheading` (magnetic) in degrees, the
    /// board-frame field `mag_x/y/z` and `mag_len` in µT, `dip` in degrees, `mag_st`; plus Bearing's
    /// `declination` (degrees east) and `decl_src` (`fix` or `fallback`).
    ///
    /// With an accelerometer + gyroscope (the fused path) also gpsd's `roll`, `pitch`, `yaw` in degrees,
    /// `acc_x/y/z` and `acc_len` in m/s² and `gyro_x/y/z` in deg/s, the units gpsd_json(5) gives for ATT
    /// ("X component of acceleration (m/s^2)", "X component of angular rate (deg/s)": gpsd's
    /// `man/gpsd_json.adoc`, ATT object), all in the board frame (x forward, y right, z down); and
    /// Bearing's `quat`, `[w,x,y,z]`, the board → ENU rotation (y true north when the declination is
    /// known, else magnetic). Without those sensors these fields are absent and the line is as before.
    public static func att(_ a: Attitude, keep: Set<String>? = nil, seq: UInt64? = nil) -> String {
        attWriter(a, keep: keep, seq: seq).finished()
    }

    static func attWriter(_ a: Attitude, keep: Set<String>?, seq: UInt64?) -> JSONObjectWriter {
        var w = JSONObjectWriter(class: "ATT", keep: keep, seq: seq)
        w.string("device", a.device)
        w.time("time", a.time)
        w.fixed("heading", a.heading, 2)
        w.fixed("mheading", a.magneticHeading, 2)
        // Bearing's: the deviation the headings include (a curve learnt from driving), degrees east.
        w.fixed("deviation", a.deviation, 2)
        w.string("mag_st", a.magStatus)
        // Bearing's: online calibration's judgement of the compass (CALIBRATION's online.quality).
        w.string("mag_q", a.quality)
        // Bearing's: seconds the heading has ridden on the gyroscope, the field disturbed.
        w.fixed("mag_held", a.held, 1)
        w.fixed("pitch", a.pitch, 2)
        w.fixed("yaw", a.yaw, 2)
        w.fixed("roll", a.roll, 2)
        w.fixed("rot", a.rateOfTurn, 2)
        w.fixed("dip", a.dip, 3)
        w.fixed("mag_len", a.magLength, 3)
        w.fixed("mag_x", a.field.x, 3)
        w.fixed("mag_y", a.field.y, 3)
        w.fixed("mag_z", a.field.z, 3)
        if let acc = a.acceleration {
            w.fixed("acc_len", acc.length, 3)
            w.fixed("acc_x", acc.x, 3)
            w.fixed("acc_y", acc.y, 3)
            w.fixed("acc_z", acc.z, 3)
        }
        if let g = a.angularRate {
            w.fixed("gyro_x", g.x, 3)
            w.fixed("gyro_y", g.y, 3)
            w.fixed("gyro_z", g.z, 3)
        }
        w.fixed("temp", a.temperature, 1)
        w.fixed("declination", a.declination, 2)
        w.string("decl_src", a.declinationSource?.rawValue)
        if let q = a.quaternion { w.fixedArray("quat", q.w, q.x, q.y, q.z, 6) }
        return w
    }

    /// Bearing's `MAG` object: one raw magnetometer sample, µT in the chip's axes, before calibration
    /// and mounting orientation (what `bearing calibrate` collects). Sent only to clients that list MAG.
    public static func mag(_ s: MagneticSample) -> String {
        var w = JSONObjectWriter(class: "MAG")
        w.string("device", s.device)
        w.string("chip", s.chip)
        w.time("time", s.time)
        w.fixed("x", s.field.x, 4)
        w.fixed("y", s.field.y, 4)
        w.fixed("z", s.field.z, 4)
        if s.overflow { w.bool("overflow", true) }
        return w.finished()
    }

    /// Bearing's `STATE` object: the link state of one source (`gpsd`, `magnetometer`, `imu`). A
    /// disconnection names the attempts that failed since the source was last connected and when the next
    /// one is due (`retry_in` seconds, `next_retry`).
    public static func state(_ s: SourceState) -> String {
        var w = JSONObjectWriter(class: "STATE")
        w.string("source", s.source)
        w.string("endpoint", s.endpoint)
        w.string("state", s.state.name)
        switch s.state {
        case .connecting(let attempt): w.int("attempt", attempt)
        case .connected: break
        case .disconnected(let reason, let retryIn):
            w.string("reason", reason.code)
            w.string("message", reason.description)
            w.int("failed_attempts", s.failedAttempts)
            w.fixed("retry_in", retryIn, 3)
            w.time("next_retry", retryIn.map { GPSTimestamp(unixTime: s.time.unixTime + $0) })
        }
        w.time("time", s.time)
        return w.finished()
    }

    public static func version(release: String) -> String {
        var w = JSONObjectWriter(class: "VERSION")
        w.string("release", release)
        w.string("rev", release)
        w.int("proto_major", protocolMajor)
        w.int("proto_minor", protocolMinor)
        return w.finished()
    }

    public static func error(_ message: String) -> String {
        var w = JSONObjectWriter(class: "ERROR")
        w.string("message", message)
        return w.finished()
    }

    /// Tells a client how many messages were dropped for it because it did not keep up.
    public static func overflow(dropped: Int) -> String {
        var w = JSONObjectWriter(class: "OVERFLOW")
        w.int("dropped", dropped)
        return w.finished()
    }

    /// A published value (what the operator chains carry).
    /// `seq`: the MQTT door's message number, written right after `class`.
    public static func encode(_ payload: Report.Payload, keep: Set<String>? = nil, seq: UInt64? = nil) -> String {
        switch payload {
        case .fix(let f): return tpv(f, keep: keep, seq: seq)
        case .sky(let s): return sky(s, keep: keep, seq: seq)
        case .attitude(let a): return att(a, keep: keep, seq: seq)
        case .relayed(let r): return relayed(r, keep: keep, seq: seq)
        }
    }

    /// `encode`'s bytes appended to `out`, made once: the same bytes as `Array(encode(…).utf8)`, with no `String` made
    /// (gpsd's relayed objects are kept as the text gpsd sent, and copied).
    public static func encode(_ payload: Report.Payload, keep: Set<String>? = nil, seq: UInt64? = nil, appendingTo out: inout [UInt8]) {
        switch payload {
        case .fix(let f): tpvWriter(f, keep: keep, seq: seq).finished(appendingTo: &out)
        case .sky(let s): skyWriter(s, keep: keep, seq: seq).finished(appendingTo: &out)
        case .attitude(let a): attWriter(a, keep: keep, seq: seq).finished(appendingTo: &out)
        case .relayed(let r): out.append(contentsOf: relayed(r, keep: keep, seq: seq).utf8)
        }
    }

    /// `SPOOL` (Bearing's own class, retained on an MQTT door's `PREFIX/spool`): messages waiting for the
    /// broker, the bytes they take and the bound, the messages dropped so far (never sent), those dropped
    /// after being sent but not acknowledged (`unconfirmed`: the broker may have them), so that a subscriber's
    /// gaps in `seq` add up to `dropped` at least and `dropped + unconfirmed` at most, and the next number.
    public static func spool(pending: UInt64, bytes: Int, bound: Int, dropped: UInt64, unconfirmed: UInt64, nextSeq: UInt64) -> String {
        var w = JSONObjectWriter(class: "SPOOL")
        w.int("pending", Int(pending))
        w.int("bytes", bytes)
        w.int("bound", bound)
        w.int("dropped", Int(dropped))
        w.int("unconfirmed", Int(unconfirmed))
        w.int("next_seq", Int(nextSeq))
        return w.finished()
    }

    /// gpsd's own line, verbatim; or written again from its fields, with only the `keep` fields and `seq`
    /// right after `class`.
    public static func relayed(_ r: RelayedObject, keep: Set<String>?, seq: UInt64? = nil) -> String {
        guard keep != nil || seq != nil, case .map(let entries) = r.object else { return r.line }
        var kept = entries.filter { $0.0 != "seq" && ($0.0 == "class" || keep?.contains($0.0) ?? true) }
        if let seq { kept.insert(("seq", .number(Double(seq))), at: kept.first?.0 == "class" ? 1 : 0) }
        return JSONValue.map(kept).json
    }

    /// `DEVICES`: one `DEVICE` per source (`gpsd://host:port`, `i2c:/dev/i2c-1:0x1e`, and the devices gpsd reported).
    public static func devices(_ paths: [String]) -> String {
        var w = JSONObjectWriter(class: "DEVICES")
        let list = paths.map { path -> String in
            var d = JSONObjectWriter(class: "DEVICE")
            d.string("path", path)
            return d.finished()
        }
        w.raw("devices", "[" + list.joined(separator: ",") + "]")
        return w.finished()
    }

    /// The `WATCH` reply echoing the options in force.
    public static func watch(_ o: WatchOptions) -> String {
        var w = JSONObjectWriter(class: "WATCH")
        w.bool("enable", o.enable)
        w.bool("json", o.json)
        w.bool("nmea", false)
        w.int("raw", 0)
        w.bool("scaled", false)
        w.bool("timing", false)
        w.bool("split24", false)
        w.bool("pps", o.pps)
        if let classes = o.classes {
            w.raw("classes", "[" + classes.sorted().map(JSONObjectWriter.escaped).joined(separator: ",") + "]")
        }
        if let name = o.pipeline { w.string("pipeline", name) }
        if !o.pipelines.isEmpty { w.raw("pipelines", chains(o.pipelines)) }
        return w.finished()
    }

    /// `{"TPV":[…],"ATT":[…]}` in class order.
    public static func chains(_ set: [StreamClass: [OperatorSpec]]) -> String {
        JSONValue.map(set.keys.sorted().map { ($0.rawValue, JSONValue.list(set[$0]!.map(\.value))) }).json
    }

    /// The `POLL` answer: the latest TPV, SKY and ATT of the default chains.
    public static func poll(time: GPSTimestamp, tpv: String?, sky: String?, att: [String]) -> String {
        var w = JSONObjectWriter(class: "POLL")
        w.time("time", time)
        w.int("active", tpv == nil ? 0 : 1)
        w.raw("tpv", "[" + (tpv ?? "") + "]")
        w.raw("sky", "[" + (sky ?? "") + "]")
        if !att.isEmpty { w.raw("att", "[" + att.joined(separator: ",") + "]") }
        return w.finished()
    }

    /// `PIPELINES`: the configured default chains (by config key: `tpv`, `att`, `gpsd_att`, …) and every named chain, with how many clients use each.
    public static func pipelines(defaults: [StreamKey: [OperatorSpec]], named: [NamedPipeline], users: [String: Int]) -> String {
        var w = JSONObjectWriter(class: "PIPELINES")
        let byName = StreamKey.all.filter { defaults[$0] != nil }.map { ($0.configName, JSONValue.list(defaults[$0]!.map(\.value))) }
        w.raw("default", JSONValue.map(byName).json)
        let list = named.map { p -> String in
            var o = JSONObjectWriter()
            o.string("name", p.name)
            o.string("origin", p.origin.rawValue)
            o.int("clients", users[p.name] ?? 0)
            o.raw("chains", chains(p.chains))
            return o.finished()
        }
        w.raw("named", "[" + list.joined(separator: ",") + "]")
        return w.finished()
    }
}
