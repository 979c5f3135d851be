import ArgumentParser
import BearingCore
import BearingIO
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to the agent's socket and print what it publishes.")

    @OptionGroup var socketOptions: SocketOptions
    @Flag(help: "Print the raw JSON lines instead of readable ones.") var json = false
    @Option(help: "Exit after this many messages.") var count: Int?
    @Option(name: .customLong("class"), help: "Only these classes, comma-separated (TPV,SKY,ATT,STATE,OVERFLOW,CALIBRATION; MAG only when asked).")
    var classes: String?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let classes {
            let list = classes.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() }
            let unknown = list.filter { !WatchOptions.publishedClasses.contains($0) }
            guard unknown.isEmpty, !list.isEmpty else {
                throw ValidationError("--class \(classes): unknown class \(unknown.first ?? "(none)"); known: \(WatchOptions.publishedClasses.sorted().joined(separator: ","))")
            }
        }
    }

    var classList: [String]? {
        classes.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).uppercased() } }
    }

    func run() throws {
        Syscall.ignoreSIGPIPE()
        let path = socketOptions.socket
        let fd: Int32
        do {
            fd = try UnixSocket.connect(path: path)
        } catch {
            throw WatchError.connect(path, error)
        }
        defer { close(fd) }
        var watch = JSONObjectWriter(class: "WATCH")
        watch.bool("enable", true)
        watch.bool("json", true)
        if let classList { watch.raw("classes", "[" + classList.map(JSONObjectWriter.escaped).joined(separator: ",") + "]") }
        let request = "?WATCH=" + watch.finished() + ";\n"
        do {
            var bytes = Array(request.utf8)
            try bytes.withUnsafeMutableBytes { try Syscall.writeAll(fd, UnsafeRawBufferPointer($0), path) }
        } catch let error as SystemError {
            throw WatchError.io(path, error)
        }

        var received = 0
        var lines = LineReader(fd: fd, subject: path)
        setvbuf(stdout, nil, _IOLBF, 0)
        while true {
            let event: LineReader.Event
            do { event = try lines.next() } catch { throw WatchError.io(path, error) }
            guard case .line(let bytes) = event else { throw WatchError.closed(path, received) }
            let line = String(decoding: bytes, as: UTF8.self)
            guard let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
                  let cls = object["class"] as? String else {
                FileHandle.standardError.write(Data("bearing watch: skipping a line that is not a JSON object: \(line.prefix(80))\n".utf8))
                continue
            }
            if ["VERSION", "WATCH", "DEVICES"].contains(cls) { continue }
            if cls == "ERROR" {
                FileHandle.standardError.write(Data("bearing watch: the agent replied: \(object["message"] as? String ?? line)\n".utf8))
                continue
            }
            if let classList, !classList.contains(cls) { continue }
            print(json ? line : WatchFormatter.line(cls, object))
            received += 1
            if let count, received >= count { return }
        }
    }
}

enum WatchError: Error, CustomStringConvertible {
    case connect(String, SystemError)
    case io(String, SystemError)
    case closed(String, Int)

    var description: String {
        switch self {
        case .connect(let path, let e):
            switch e.errno {
            case ENOENT: return "no socket at \(path): is bearing running? (systemctl status bearing)"
            case ECONNREFUSED: return "nothing is listening at \(path): bearing is not running (the socket file is stale)"
            case EACCES, EPERM: return "permission denied for \(path): add your user to the socket's group (see README)"
            default: return "cannot connect to \(path): \(e.message)"
            }
        case .io(let path, let e): return "\(path): \(e.message)"
        case .closed(let path, let n): return "bearing closed the connection at \(path) after \(n) message\(n == 1 ? "" : "s")"
        }
    }
}

/// One readable line per gpsd JSON object.
enum WatchFormatter {
    static func num(_ o: [String: Any], _ k: String) -> Double? { (o[k] as? NSNumber)?.doubleValue }

    static func f(_ v: Double?, _ places: Int, _ unit: String = "") -> String? {
        v.map { String(format: "%.\(places)f", $0) + unit }
    }

    static func line(_ cls: String, _ o: [String: Any]) -> String {
        switch cls {
        case "TPV":
            let mode = (o["mode"] as? Int).flatMap(FixMode.init(rawValue:)) ?? .notSeen
            var parts = ["TPV  ", o["time"] as? String ?? "(no time)", mode.description]
            if let lat = num(o, "lat"), let lon = num(o, "lon") {
                parts.append(String(format: "%.6f°%@ %.6f°%@", abs(lat), lat < 0 ? "S" : "N", abs(lon), lon < 0 ? "W" : "E"))
            }
            if let alt = f(num(o, "altHAE"), 1, " m") { parts.append("alt " + alt) }
            if let speed = f(num(o, "speed"), 2, " m/s") { parts.append(speed) }
            if let track = f(num(o, "track"), 1, "°") { parts.append("track " + track) }
            if let eph = f(num(o, "eph"), 1, " m") { parts.append("±" + eph) }
            return parts.joined(separator: "  ")
        case "SKY":
            let sats = o["satellites"] as? [[String: Any]] ?? []
            let used = sats.filter { $0["used"] as? Bool == true }.count
            var parts = ["SKY  ", "\(sats.count) satellites, \(used) used"]
            if let hdop = f(num(o, "hdop"), 2) { parts.append("hdop " + hdop) }
            return parts.joined(separator: "  ")
        case "STATE":
            var s = "STATE  \(o["source"] as? String ?? "?") \(o["endpoint"] as? String ?? "") \(o["state"] as? String ?? "?")"
            if let message = o["message"] as? String { s += " (\(message))" }
            if let attempt = o["attempt"] as? Int { s += " #\(attempt)" }
            return s
        case "ATT":
            var parts = ["ATT  ", o["time"] as? String ?? "(no time)"]
            if let h = f(num(o, "heading"), 1, "° true") { parts.append(h) }
            if let m = f(num(o, "mheading"), 1, "° magnetic") { parts.append(m) }
            if let d = f(num(o, "declination"), 2, "°") { parts.append("decl " + d + " (\(o["decl_src"] as? String ?? "?"))") }
            if let len = f(num(o, "mag_len"), 1, " µT") { parts.append("|B| " + len) }
            if let dip = f(num(o, "dip"), 1, "°") { parts.append("dip " + dip) }
            if let st = o["mag_st"] as? String { parts.append("mag_st " + st) }
            return parts.joined(separator: "  ")
        case "MAG":
            let xyz = ["x", "y", "z"].compactMap { f(num(o, $0), 2) }.joined(separator: " ")
            return "MAG  \(o["time"] as? String ?? "(no time)")  \(o["chip"] as? String ?? "?")  raw \(xyz) µT (chip axes)"
        case "CALIBRATION":
            var s = "CALIBRATION  \(o["status"] as? String ?? "?")  \(o["file"] as? String ?? "")"
            if let model = o["model"] as? String {
                s += "  \(model) fitted \(o["fitted"] as? String ?? "?")"
                if let e = f(num(o, "fit_error"), 2, "%") { s += "  fit error " + e }
                if let h = f(num(o, "heading_error"), 2, "°") { s += "  heading error ≈" + h }
            }
            if let error = o["error"] as? String { s += "  (last load rejected: \(error))" }
            return s
        case "OVERFLOW":
            return "OVERFLOW  \(o["dropped"] as? Int ?? 0) messages dropped: this client read too slowly"
        default:
            return "\(cls)  \(o)"
        }
    }
}
