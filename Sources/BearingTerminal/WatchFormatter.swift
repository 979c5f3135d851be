import BearingModel
import BearingWire

/// One readable line per gpsd JSON object.
public enum WatchFormatter {
    public static func f(_ v: Double?, _ places: Int, _ unit: String = "") -> String? {
        v.map { String(printf: "%.\(places)f", $0) + unit }
    }

    public static func line(_ m: WireMessage) -> String {
        switch m.className {
        case "TPV":
            let fix = m.fix!
            var parts = ["TPV  ", fix.time?.iso8601 ?? "(no time)", fix.mode.description]
            if let lat = fix.latitude, let lon = fix.longitude {
                parts.append(String(printf: "%.6f°%@ %.6f°%@", abs(lat), lat < 0 ? "S" : "N", abs(lon), lon < 0 ? "W" : "E"))
            }
            if let alt = f(fix.altHAE, 1, " m") { parts.append("alt " + alt) }
            if let speed = f(fix.speed, 2, " m/s") { parts.append(speed) }
            if let track = f(fix.track, 1, "°") { parts.append("track " + track) }
            if let eph = f(fix.eph, 1, " m") { parts.append("±" + eph) }
            return parts.joined(separator: "  ")
        case "SKY":
            let sky = m.sky!
            var parts = ["SKY  ", sky.satellites.map { "\($0.count) satellites, \(sky.usedCount ?? 0) used" }
                            ?? "DOPs only" + (sky.usedCount.map { ", \($0) used" } ?? "")]
            if let hdop = f(sky.hdop, 2) { parts.append("hdop " + hdop) }
            return parts.joined(separator: "  ")
        case "STATE":
            var s = "STATE  \(m.string("source") ?? "?") \(m.string("endpoint") ?? "") \(m.string("state") ?? "?")"
            if let message = m.string("message") { s += " (\(message))" }
            if let attempt = m["attempt"]?.int { s += " #\(attempt)" }
            return s
        case "ATT":
            var parts = ["ATT  ", m.string("time") ?? "(no time)"]
            if let h = f(m.number("heading"), 1, "° true") { parts.append(h) }
            if let mh = f(m.number("mheading"), 1, "° magnetic") { parts.append(mh) }
            if let p = f(m.number("pitch"), 1, "°") { parts.append("pitch " + p) }
            if let r = f(m.number("roll"), 1, "°") { parts.append("roll " + r) }
            if let d = f(m.number("declination"), 2, "°") { parts.append("decl " + d + " (\(m.string("decl_src") ?? "?"))") }
            if let len = f(m.number("mag_len"), 1, " µT") { parts.append("|B| " + len) }
            if let dip = f(m.number("dip"), 1, "°") { parts.append("dip " + dip) }
            if let st = m.string("mag_st") { parts.append("mag_st " + st) }
            if let q = m.string("mag_q") { parts.append("compass " + q) }
            if let dev = f(m.number("deviation"), 1, "°") { parts.append("dev " + dev) }
            if let device = m.string("device") { parts.append("(\(device))") }
            return parts.joined(separator: "  ")
        case "GST":
            var parts = ["GST  ", m.string("time") ?? "(no time)"]
            if let rms = f(m.number("rms"), 2) { parts.append("rms " + rms) }
            if let lat = f(m.number("lat"), 2, " m"), let lon = f(m.number("lon"), 2, " m") { parts.append("σ lat \(lat) lon \(lon)") }
            return parts.joined(separator: "  ")
        case "MAG":
            let xyz = ["x", "y", "z"].compactMap { f(m.number($0), 2) }.joined(separator: " ")
            return "MAG  \(m.string("time") ?? "(no time)")  \(m.string("chip") ?? "?")  raw \(xyz) µT (chip axes)"
        case "CALIBRATION":
            var s = "CALIBRATION  \(m.string("status") ?? "?")  \(m.string("file") ?? "")"
            if let model = m.string("model") {
                s += "  \(model) fitted \(m.string("fitted") ?? "?")"
                if let e = f(m.number("fit_error"), 2, "%") { s += "  fit error " + e }
                if let h = f(m.number("heading_error"), 2, "°") { s += "  heading error ≈" + h }
            }
            if let error = m.string("error") { s += "  (last load rejected: \(error))" }
            return s
        case "OVERFLOW":
            return "OVERFLOW  \(m.dropped ?? 0) messages dropped: this client read too slowly"
        default:
            return "\(m.className)  \(m.line)"
        }
    }
}
