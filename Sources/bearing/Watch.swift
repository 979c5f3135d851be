import ArgumentParser
import BearingTerminal
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
