import ArgumentParser
import BearingDaemon
import BearingClient
import BearingModel
import BearingWire
import BearingPOSIX
import BearingMQTT
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connect to the agent's socket and print what it publishes.",
        usage: """
            bearing watch [--socket <path> | --tcp <host:port>] [--json] [--count <count>] [--class <class>] [--pipeline <name>] [--pipelines <json>]
            bearing watch --mqtt <url> [--mqtt-root <root>] [--mqtt-ca <file>] [--mqtt-certificate <file> --mqtt-key <file>] [--mqtt-username <name> [--mqtt-password-file <file>]] [--json] [--count <count>]
            """)

    @OptionGroup var socketOptions: SocketOptions
    @Flag(help: "Print the raw JSON lines instead of readable ones.") var json = false
    @Option(help: "Exit after this many messages.") var count: Int?
    @Option(name: .customLong("class"), help: "Only these classes, comma-separated (TPV,SKY,ATT,GST,STATE,OVERFLOW,CALIBRATION; MAG, PPS and TOFF only when asked).")
    var classes: String?
    @Option(help: ArgumentHelp("Use this named pipeline (see ?PIPELINES).", valueName: "name")) var pipeline: String?
    @Option(help: ArgumentHelp("Chains of your own, JSON by class, e.g. '{\"TPV\":[{\"op\":\"throttle\",\"interval\":5}]}'.", valueName: "json"))
    var pipelines: String?
    @OptionGroup var mqttOptions: MQTTWatchOptions

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let classes {
            let list = classes.split(separator: ",").map { $0.trimmingWhitespace().uppercased() }
            let unknown = list.filter { !WatchOptions.publishedClasses.contains($0) }
            guard unknown.isEmpty, !list.isEmpty else {
                throw ValidationError("--class \(classes): unknown class \(unknown.first ?? "(none)"); known: \(WatchOptions.publishedClasses.sorted().joined(separator: ","))")
            }
        }
        if let pipeline, !NamedPipeline.validName(pipeline) {
            throw ValidationError("--pipeline \(pipeline): a pipeline name uses a–z, 0–9, _ and -")
        }
        _ = try chains()
    }

    var classList: [String]? {
        classes.map { $0.split(separator: ",").map { $0.trimmingWhitespace().uppercased() } }
    }

    func chains() throws -> [StreamClass: [OperatorSpec]]? {
        guard let pipelines else { return nil }
        do {
            return try NamedPipeline.chains(try JSONValue.parse(pipelines), path: "--pipelines")
        } catch let e as JSONParseError {
            throw ValidationError("--pipelines: not valid JSON: \(e)")
        } catch {
            throw ValidationError("\(error)")
        }
    }

    func run() throws {
        if let configuration = try mqttOptions.clientConfiguration(clientID: "bearing-watch-\(getpid())") {
            return try FleetWatcher(configuration: configuration, root: mqttOptions.mqttRoot ?? "bearing", json: json, count: count).run()
        }
        let endpoint = try socketOptions.endpoint()
        let client = BearingClient(endpoint)
        var change = WatchChange(enable: true, json: true)
        if let classList { change.classes = .some(Set(classList)) }
        if classList?.contains("PPS") == true || classList?.contains("TOFF") == true { change.pps = true }
        if let pipeline { change.pipeline = .some(pipeline) }
        change.pipelines = try chains()
        Syscall.lineBufferStandardOutput()
        var received = 0
        let result = stream(client, change, &received)
        if case .failure(let e) = result {
            if case .closed = e { throw WatchError("bearing closed the connection at \(endpoint) after \(received) message\(received == 1 ? "" : "s")") }
            throw WatchError(e.description)
        }
    }

    private func stream(_ client: BearingClient, _ change: WatchChange, _ received: inout Int) -> Result<Void, BearingClientError> {
        do throws(BearingClientError) {
            try client.connect()
            try client.send(.watch(change))
            while true {
                guard let m = try client.next() else { continue }
                if ["VERSION", "WATCH", "DEVICES"].contains(m.className) { continue }
                if let message = m.errorMessage {
                    Syscall.printToStandardError("bearing watch: the agent replied: \(message)\n")
                    continue
                }
                if let classList, !classList.contains(m.className) { continue }
                print(json ? m.line : WatchFormatter.line(m))
                received += 1
                if let count, received >= count { return .success(()) }
            }
        } catch {
            return .failure(error)
        }
    }
}

struct WatchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

extension SocketOptions {
    /// The UNIX socket, or the TCP door when `--tcp` is given.
    func endpoint() throws -> BearingClient.Endpoint {
        guard let tcp else { return .unix(socket) }
        guard let hp = HostPort.parse(tcp) else { throw ValidationError("--tcp \(tcp): expected HOST:PORT, e.g. 127.0.0.1:2948") }
        return .tcp(host: hp.host, port: hp.port)
    }
}

/// One readable line per gpsd JSON object.
enum WatchFormatter {
    static func f(_ v: Double?, _ places: Int, _ unit: String = "") -> String? {
        v.map { String(printf: "%.\(places)f", $0) + unit }
    }

    static func line(_ m: WireMessage) -> String {
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
            var parts = ["SKY  ", "\(sky.satellites.count) satellites, \(sky.usedCount) used"]
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
