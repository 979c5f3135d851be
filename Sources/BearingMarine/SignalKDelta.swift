import BearingWire
import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// Where a Signal K delta says its values come from: `$source` is `<label>.compass` or `<label>.gps`.
public struct SignalKSource: Sendable, Equatable {
    public var label: String

    public init(label: String = "bearing") { self.label = label }

    /// A label a `$source` may carry: definitions.json's `sourceRef` pattern `^[A-Za-z0-9-_.]*$`, not empty.
    /// Written as given otherwise (escaped for JSON): configuration checks it with this.
    public static func validLabel(_ label: String) -> Bool {
        !label.isEmpty && label.utf8.allSatisfy {
            switch $0 {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                return true
            default:
                return false
            }
        }
    }
}

/// Signal K delta messages (specification 1.5, schemas/delta.json): one JSON object per line (no newline),
/// `{"context":"vessels.self","updates":[{"$source":…,"timestamp":…,"values":[{"path":…,"value":…},…]}]}`,
/// in SI units (rad, rad/s, m/s) as groups/navigation.json gives them. Pure: no I/O.
///
/// An update carries `$source` (a `sourceRef` string), not a `source` object: delta.json allows either but
/// not both. `timestamp` is RFC 3339 in UTC (definitions.json: pattern `.*Z$`); delta.json does not require it.
public enum SignalKDelta {
    /// The attitude as `navigation.headingMagnetic`, `navigation.headingTrue` (when known),
    /// `navigation.magneticVariation` (+ east, when known), `navigation.attitude` {roll, pitch, yaw} (when roll
    /// and pitch are known; yaw the true heading when known, else the magnetic) and `navigation.rateOfTurn`
    /// (rad/s, + to starboard, when known). Headings in [0, 2π); non-finite values are left out.
    public static func attitude(_ a: Attitude, source: SignalKSource) -> String {
        var values: [String] = []
        if a.magneticHeading.isFinite {
            values.append(value("navigation.headingMagnetic", heading(a.magneticHeading)))
        }
        if let h = a.heading, h.isFinite {
            values.append(value("navigation.headingTrue", heading(h)))
        }
        // navigation.json: "The magnetic variation (declination) … Easterly variations are positive and
        // Westerly variations are negative (in Radians)." — Bearing's declination is degrees east too.
        if let d = a.declination, d.isFinite {
            values.append(value("navigation.magneticVariation", number(radians(d))))
        }
        // navigation.json: headingCompass "Current magnetic heading received from the compass. This is not
        // adjusted for magneticDeviation of the compass", magneticDeviation "Magnetic deviation of the compass at
        // the current headingCompass" (rad, + east) — only with a deviation curve in force.
        if let dev = a.deviation, dev.isFinite {
            values.append(value("navigation.headingCompass", heading(a.compassHeading)))
            values.append(value("navigation.magneticDeviation", number(radians(dev))))
        }
        // navigation.json, attitude: roll "Vessel roll, +ve is list to starboard", pitch "Pitch, +ve is bow up",
        // yaw "Yaw, +ve is heading change to starboard" — Bearing's roll (+ starboard side down) and pitch
        // (+ nose up) as they are.
        if let roll = a.roll, let pitch = a.pitch, roll.isFinite, pitch.isFinite {
            var o = JSONObjectWriter()
            o.raw("roll", number(radians(roll)))
            o.raw("pitch", number(radians(pitch)))
            let yaw = a.heading.flatMap { $0.isFinite ? $0 : nil } ?? a.magneticHeading
            if yaw.isFinite { o.raw("yaw", heading(yaw)) }
            values.append(value("navigation.attitude", o.finished()))
        }
        // navigation.json: "Rate of turn (+ve is change to starboard)", rad/s; Bearing's is °/min, + to starboard.
        if let rot = a.rateOfTurn, rot.isFinite {
            values.append(value("navigation.rateOfTurn", number(radians(rot) / 60)))
        }
        return delta(source: source.label + ".compass", time: a.time, values: values)
    }

    /// The fix as `navigation.position` {latitude, longitude} (degrees, with a position: mode ≥ 2D),
    /// `navigation.courseOverGroundTrue` (rad, [0, 2π)) and `navigation.speedOverGround` (m/s), each when known;
    /// nil when there is none of them. No `timestamp` when the fix has no time.
    ///
    /// No altitude: definitions.json's position says only "Altitude" in m (neither ellipsoid nor sea level).
    public static func fix(_ f: GPSFix, source: SignalKSource) -> String? {
        var values: [String] = []
        if f.hasPosition, let lat = f.latitude, let lon = f.longitude, lat.isFinite, lon.isFinite {
            var o = JSONObjectWriter()
            o.raw("longitude", NMEA0183.fixed(lon, 9))
            o.raw("latitude", NMEA0183.fixed(lat, 9))
            values.append(value("navigation.position", o.finished()))
        }
        if let track = f.track, track.isFinite {
            values.append(value("navigation.courseOverGroundTrue", heading(track)))
        }
        if let speed = f.speed, speed.isFinite {
            values.append(value("navigation.speedOverGround", NMEA0183.fixed(speed, 3)))
        }
        guard !values.isEmpty else { return nil }
        return delta(source: source.label + ".gps", time: f.time, values: values)
    }

    private static func delta(source: String, time: GPSTimestamp?, values: [String]) -> String {
        var update = JSONObjectWriter()
        update.string("$source", source)
        update.time("timestamp", time)
        update.raw("values", "[" + values.joined(separator: ",") + "]")
        var w = JSONObjectWriter()
        w.string("context", "vessels.self")
        w.raw("updates", "[" + update.finished() + "]")
        return w.finished()
    }

    private static func value(_ path: StaticString, _ json: String) -> String {
        var o = JSONObjectWriter()
        o.string("path", path.description)
        o.raw("value", json)
        return o.finished()
    }

    private static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

    /// Six decimals (1e-6 rad is 0.00006°), no "-0.000000".
    private static func number(_ v: Double) -> String { NMEA0183.fixed(v, 6) }

    /// A direction in degrees as radians in [0, 2π): normalized in degrees first, and as 2π rounds to
    /// 6.283185, rounding never reaches 2π.
    private static func heading(_ degrees: Double) -> String { number(radians(Compass.normalize(degrees))) }
}
