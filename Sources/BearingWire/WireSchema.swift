import BearingModel
/// The fields each published class carries (gpsd 3.22's names), for validating `fields` and `deadband`
/// operators, and numeric field access by wire name.
public enum WireSchema {
    /// Every field of each class (besides `class`). ATT lists Bearing's compass fields and gpsd's.
    public static let fields: [StreamClass: [String]] = [
        .tpv: ["device", "status", "mode", "time", "ept", "lat", "lon", "altHAE", "altMSL", "alt", "epx", "epy", "epv", "track",
               "magtrack", "magvar", "speed", "climb", "epd", "eps", "epc", "geoidSep", "eph", "sep"],
        .sky: ["device", "time", "xdop", "ydop", "vdop", "tdop", "hdop", "gdop", "pdop", "nSat", "uSat", "satellites"],
        .att: ["device", "time", "timeTag", "heading", "mheading", "mag_st", "pitch", "pitch_st", "yaw", "yaw_st", "roll", "roll_st",
               "rot", "dip", "mag_len", "mag_x", "mag_y", "mag_z", "acc_len", "acc_x", "acc_y", "acc_z", "gyro_temp", "gyro_x",
               "gyro_y", "gyro_z", "depth", "temp", "declination", "decl_src", "quat"],
        .gst: ["device", "time", "rms", "major", "minor", "orient", "lat", "lon", "alt"],
        .pps: ["device", "real_sec", "real_nsec", "clock_sec", "clock_nsec", "precision", "shm", "qErr"],
        .toff: ["device", "real_sec", "real_nsec", "clock_sec", "clock_nsec", "precision", "shm"],
    ]

    private static let textFields: Set<String> = ["device", "time", "timeTag", "mag_st", "pitch_st", "yaw_st", "roll_st",
                                                  "decl_src", "satellites", "shm", "quat"]

    /// The numeric fields of each class (what `deadband` with `field` may watch).
    public static let numericFields: [StreamClass: [String]] = fields.mapValues { $0.filter { !textFields.contains($0) } }

    public static func number(_ field: String, of f: GPSFix) -> Double? {
        switch field {
        case "status": return f.status.map(Double.init)
        case "mode": return Double(f.mode.rawValue)
        case "ept": return f.ept
        case "lat": return f.latitude
        case "lon": return f.longitude
        case "altHAE": return f.altHAE
        case "altMSL", "alt": return f.altMSL
        case "epx": return f.epx
        case "epy": return f.epy
        case "epv": return f.epv
        case "track": return f.track
        case "magtrack": return f.magneticTrack
        case "magvar": return f.magneticVariation
        case "speed": return f.speed
        case "climb": return f.climb
        case "epd": return f.epd
        case "eps": return f.eps
        case "epc": return f.epc
        case "geoidSep": return f.geoidSeparation
        case "eph": return f.eph
        case "sep": return f.sep
        default: return nil
        }
    }

    public static func number(_ field: String, of s: SkyView) -> Double? {
        switch field {
        case "xdop": return s.xdop
        case "ydop": return s.ydop
        case "vdop": return s.vdop
        case "tdop": return s.tdop
        case "hdop": return s.hdop
        case "gdop": return s.gdop
        case "pdop": return s.pdop
        case "nSat": return s.satellites.map { Double($0.count) }
        case "uSat": return s.usedCount.map(Double.init)
        default: return nil
        }
    }

    public static func number(_ field: String, of a: Attitude) -> Double? {
        switch field {
        case "heading": return a.heading
        case "mheading": return a.magneticHeading
        case "dip": return a.dip
        case "mag_len": return a.magLength
        case "mag_x": return a.field.x
        case "mag_y": return a.field.y
        case "mag_z": return a.field.z
        case "declination": return a.declination
        case "roll": return a.roll
        case "pitch": return a.pitch
        case "yaw": return a.yaw
        case "rot": return a.rateOfTurn
        case "acc_len": return a.acceleration?.length
        case "acc_x": return a.acceleration?.x
        case "acc_y": return a.acceleration?.y
        case "acc_z": return a.acceleration?.z
        case "gyro_x": return a.angularRate?.x
        case "gyro_y": return a.angularRate?.y
        case "gyro_z": return a.angularRate?.z
        case "temp": return a.temperature
        default: return nil
        }
    }
}
