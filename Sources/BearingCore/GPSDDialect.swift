/// Encoding of Bearing's values as gpsd JSON objects (protocol 3.14, as gpsd 3.22 speaks it).
///
/// Field names, units and decimal places follow gpsd's `json_tpv_dump`/`json_sky_dump` output, so
/// gpsd's own client libraries and tools parse what Bearing publishes. `STATE` and `OVERFLOW` are
/// Bearing's own classes; gpsd clients skip classes they do not know.
public enum GPSDDialect {
    public static let protocolMajor = 3
    public static let protocolMinor = 14

    public static func tpv(_ f: GPSFix) -> String {
        var w = JSONObjectWriter(class: "TPV")
        w.string("device", f.device)
        w.int("status", f.status)
        w.int("mode", f.mode.rawValue)
        w.string("time", f.time?.iso8601)
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
        return w.finished()
    }

    public static func sky(_ s: SkyView) -> String {
        var w = JSONObjectWriter(class: "SKY")
        w.string("device", s.device)
        w.string("time", s.time?.iso8601)
        w.fixed("xdop", s.xdop, 2)
        w.fixed("ydop", s.ydop, 2)
        w.fixed("vdop", s.vdop, 2)
        w.fixed("tdop", s.tdop, 2)
        w.fixed("hdop", s.hdop, 2)
        w.fixed("gdop", s.gdop, 2)
        w.fixed("pdop", s.pdop, 2)
        w.int("nSat", s.satellites.count)
        w.int("uSat", s.usedCount)
        var list = "["
        for (i, sat) in s.satellites.enumerated() {
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
        return w.finished()
    }

    /// gpsd's `ATT` object for a compass: `heading` (true) and `mheading` (magnetic) in degrees, the
    /// board-frame field `mag_x/y/z` and `mag_len` in µT, `dip` in degrees, `mag_st`; plus Bearing's
    /// `declination` (degrees east) and `decl_src` (`fix` or `fallback`).
    public static func att(_ a: Attitude) -> String {
        var w = JSONObjectWriter(class: "ATT")
        w.string("device", a.device)
        w.string("time", a.time.iso8601)
        w.fixed("heading", a.heading, 2)
        w.fixed("mheading", a.magneticHeading, 2)
        w.string("mag_st", a.magStatus)
        w.fixed("dip", a.dip, 3)
        w.fixed("mag_len", a.magLength, 3)
        w.fixed("mag_x", a.field.x, 3)
        w.fixed("mag_y", a.field.y, 3)
        w.fixed("mag_z", a.field.z, 3)
        w.fixed("declination", a.declination, 2)
        w.string("decl_src", a.declinationSource?.rawValue)
        return w.finished()
    }

    /// Bearing's `MAG` object: one raw magnetometer sample, µT in the chip's axes, before calibration
    /// and mounting orientation (what `bearing calibrate` collects). Sent only to clients that list MAG.
    public static func mag(_ s: MagneticSample) -> String {
        var w = JSONObjectWriter(class: "MAG")
        w.string("device", s.device)
        w.string("chip", s.chip)
        w.string("time", s.time.iso8601)
        w.fixed("x", s.field.x, 4)
        w.fixed("y", s.field.y, 4)
        w.fixed("z", s.field.z, 4)
        if s.overflow { w.bool("overflow", true) }
        return w.finished()
    }

    /// Bearing's `STATE` object: the link state of one source (`gpsd`, later `magnetometer`).
    public static func state(_ s: SourceState) -> String {
        var w = JSONObjectWriter(class: "STATE")
        w.string("source", s.source)
        w.string("endpoint", s.endpoint)
        w.string("state", s.state.name)
        switch s.state {
        case .connecting(let attempt): w.int("attempt", attempt)
        case .connected: break
        case .disconnected(let reason):
            w.string("reason", reason.code)
            w.string("message", reason.description)
        }
        w.string("time", s.time.iso8601)
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
}
