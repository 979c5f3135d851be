import BearingClient
import BearingConfig
import BearingDaemon
import BearingModel
import BearingMQTT
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What `bearing report` does, apart from its command line. The command runner and the black box's source
/// are given, so a test can make commands missing or failing.
public struct BugReport {
    public var output: String
    public var config: String?
    public var unit = "bearing.service"
    public var journalLines = 500
    public var runner: CommandRunner = Subprocess.run
    public var blackBox: (String) throws -> [UInt8] = { try BlackBoxFetch.ring(socketPath: $0) }
    /// Where the private staging directory is made: `$TMPDIR`, else /tmp.
    public var temporaryRoot = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"

    public static let defaultConfig = "/etc/bearing/bearing.yaml"

    /// One file of the archive: nil `bytes` when it could not be collected, and `note` says why.
    public struct Part {
        public var name: String
        public var bytes: [UInt8]?
        public var note: String
    }

    public struct Written {
        public var path: String
        public var size: Int
        public var parts: [Part]
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Without leading and trailing white space and line breaks.
    static func trimmed(_ s: String) -> String {
        let blank: Set<Character> = [" ", "\t", "\n", "\r", "\r\n"]
        return String(s.drop { blank.contains($0) }.reversed().drop { blank.contains($0) }.reversed())
    }

    public init(output: String, config: String?, unit: String = "bearing.service", journalLines: Int = 500) {
        self.output = output
        self.config = config
        self.unit = unit
        self.journalLines = journalLines
    }

    /// `path` made absolute against the current directory (as the config does with `./…` paths).
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(path).standardized.path
    }

    /// `bearing-report-20260601T120304Z.tar.gz`.
    public static func defaultName(now: Int64 = Syscall.wallClock().seconds) -> String { "bearing-report-\(utc(now)).tar.gz" }

    /// `20260601T120304Z`.
    static func utc(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var tm = tm()
        gmtime_r(&t, &tm)
        return String(printf: "%04d%02d%02dT%02d%02d%02dZ", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday),
                      Int(tm.tm_hour), Int(tm.tm_min), Int(tm.tm_sec))
    }

    /// Collects every part, tars them in a private directory and writes the archive atomically, mode 0600.
    /// Parts that cannot be had are named in the manifest; only an archive that cannot be written throws.
    public func write() throws -> Written {
        var path = Self.absolute(output)
        var st = stat()
        if stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { path += "/" + Self.defaultName() }
        let directory = AtomicFile.parent(of: path)
        guard stat(directory, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw Failure(description: "\(path): no directory \(directory)")
        }
        var collector = Collector(report: self)
        let parts = collector.collect()
        let manifest = collector.manifest(parts)

        let temporary: String
        do { temporary = try Directory.makeTemporary(prefix: "\(temporaryRoot)/bearing-report.") } catch {
            throw Failure(description: "cannot make a private directory in \(temporaryRoot): \(error.message)")
        }
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        let stage = temporary + "/report"
        let archive = temporary + "/report.tar.gz"
        var names: [String] = []
        do {
            try AtomicFile.makeDirectories(stage, mode: 0o700)
            for part in [Part(name: "MANIFEST.txt", bytes: Array(manifest.utf8), note: "")] + parts {
                guard let bytes = part.bytes else { continue }
                try AtomicFile.write(bytes, to: "\(stage)/\(part.name)", mode: 0o600)
                names.append(part.name)
            }
        } catch {
            throw Failure(description: "cannot stage the report in \(temporary): \(error)")
        }
        let tar = runner(["tar", "-czf", archive, "-C", stage] + names, 120, 1 << 16)
        guard tar.succeeded else {
            throw Failure(description: "tar -czf: \(tar.summary) \(Self.trimmed(tar.errorText))")
        }
        do {
            let bytes = try AtomicFile.read(archive, limit: 1 << 30)
            try AtomicFile.write(bytes, to: path, mode: 0o600)
            return Written(path: path, size: bytes.count, parts: parts)
        } catch {
            throw Failure(description: "cannot write \(path): \(error)")
        }
    }
}

/// One report's collecting: the parts, the commands run and the secrets to keep out.
private struct Collector {
    let report: BugReport
    var commands: [(argv: [String], outcome: CommandOutcome, seconds: Double)] = []
    /// The config's secrets in the clear, scrubbed from every text part and the manifest.
    var secrets: [String] = []
    var unitState: [String: String] = [:]
    var unitProblem: String?
    var configPath = BugReport.defaultConfig
    var configOrigin = "the default"
    var configProblem: String?

    init(report: BugReport) { self.report = report }

    var unit: String { report.unit }

    mutating func collect() -> [BugReport.Part] {
        readUnit()
        var parts = [versions()]
        let (configPart, agent, boardPart) = configuration()
        parts.append(configPart)
        parts += calibrations(agent)
        parts.append(boardPart)
        parts.append(journal())
        parts.append(security())
        parts.append(blackBox(agent))
        return parts.map { part in
            guard let bytes = part.bytes, part.name.hasSuffix(".txt") || part.name.hasSuffix(".yaml") || part.name.hasSuffix(".json") else { return part }
            var p = part
            p.bytes = Array(clean(String(decoding: bytes, as: UTF8.self)).utf8)
            return p
        }
    }

    /// Text with URL passwords, the config's secrets and PEM private keys redacted.
    func clean(_ text: String) -> String {
        var lines: [Substring] = []
        var inKey = false
        for line in ConfigRedaction.scrub(text, secrets: secrets).split(separator: "\n", omittingEmptySubsequences: false) {
            let key = line.contains("PRIVATE KEY")
            if key && line.contains("-----BEGIN") { inKey = true }
            lines.append(inKey || key ? Substring(ConfigRedaction.marker) : line)
            if key && line.contains("-----END") { inKey = false }
        }
        return lines.joined(separator: "\n")
    }

    mutating func command(_ argv: [String], timeout: Double = 10, limit: Int = 16 << 20) -> CommandOutcome {
        let start = Syscall.monotonicSeconds()
        let outcome = report.runner(argv, timeout, limit)
        commands.append((argv, outcome, Syscall.monotonicSeconds() - start))
        return outcome
    }

    /// Why a command gave nothing usable, in the manifest's words.
    func why(_ outcome: CommandOutcome, _ tool: String) -> String {
        let said = outcome.errorText.split(separator: "\n").first.map { BugReport.trimmed(String($0)) } ?? ""
        switch outcome.end {
        case .missing: return "command missing: \(tool) is not installed (not found in PATH)"
        case .notStarted(let e) where e == EACCES || e == EPERM: return "permission denied: \(tool) cannot be run"
        case .exited where said.contains("ermission denied") || said.contains("Access denied") || said.contains("not authorized"):
            return "permission denied: \(said) (run with sudo)"
        case .exited where unitState["LoadState"] == "not-found"
                || (said.contains(unit) && ["not found", "not loaded", "No such", "does not exist"].contains { said.contains($0) }):
            return "unit unknown: \(unit)\(said.isEmpty ? "" : " (\(tool): \(said))")"
        case .exited where said.contains("not been booted with systemd") || said.contains("Failed to connect to bus"):
            return "systemd not reachable: \(said)"
        default: return "\(tool): \(outcome.summary)\(said.isEmpty ? "" : ": \(said)")"
        }
    }

    // MARK: - The parts

    /// The unit's state and command line (`systemctl show`), for the manifest, the config and board it runs with.
    mutating func readUnit() {
        let props = "LoadState,ActiveState,SubState,MainPID,ExecMainStatus,FragmentPath,ExecStart"
        let r = command(["systemctl", "show", unit, "--no-pager", "--property=\(props)"])
        guard r.succeeded else { unitProblem = why(r, "systemctl"); return }
        for line in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            unitState[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
    }

    /// The value of `--name VALUE` or `--name=VALUE` on the unit's ExecStart command line.
    func unitArgument(_ name: String) -> String? {
        guard let exec = unitState["ExecStart"] else { return nil }
        var rest = Substring(exec)
        while !rest.isEmpty, !rest.hasPrefix("argv[]=") { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        let argv = rest.dropFirst(7).prefix { $0 != ";" }.split(separator: " ").map(String.init)
        for (i, word) in argv.enumerated() {
            if word == name, i + 1 < argv.count { return argv[i + 1] }
            if word.hasPrefix(name + "=") { return String(word.dropFirst(name.count + 1)) }
        }
        return nil
    }

    func read(_ path: String, limit: Int = 1 << 20) -> Result<[UInt8], SystemError> {
        do { return .success(try AtomicFile.read(path, limit: limit)) } catch { return .failure(error) }
    }

    func why(_ error: SystemError, _ path: String) -> String {
        switch error.errno {
        case ENOENT: return "absent: no file at \(path)"
        case EACCES, EPERM: return "permission denied: \(path) (run with sudo)"
        default: return "\(path): \(error.message)"
        }
    }

    mutating func versions() -> BugReport.Part {
        var lines = ["bearing \(Release.version)"]
        var link = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &link, link.count - 1)
        if n > 0 { lines.append("executable: \(String(decoding: link[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self))") }
        lines.append("compiled with: Swift \(Self.swiftVersion)")
        lines.append("libmosquitto: \(MQTTClient.libraryVersion)")
        if case .success(let maps) = read("/proc/self/maps", limit: 16 << 20) {
            let libraries = Set(String(decoding: maps, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
                guard let slash = line.lastIndex(of: "/") else { return nil }
                let name = String(line[line.index(after: slash)...])
                return ["gps", "yaml", "i2c", "mosquitto", "ssl", "crypto", "libc.", "libstdc++"].contains { name.contains($0) } && name.contains(".so") ? name : nil
            })
            lines.append("shared libraries: \(libraries.isEmpty ? "none of note" : libraries.sorted().joined(separator: ", "))")
        }
        func output(_ label: String, _ argv: [String]) {
            let r = command(argv)
            let text = BugReport.trimmed(String(decoding: r.stdout + r.stderr, as: UTF8.self))
            lines.append("\(label): \(r.succeeded && !text.isEmpty ? text : why(r, argv[0]))")
        }
        output("package", ["dpkg-query", "--show", "--showformat=${Package} ${Version}", "bearing"])
        output("uname -a", ["uname", "-a"])
        output("gpsd --version", ["gpsd", "--version"])
        lines.append("")
        switch read("/etc/os-release") {
        case .success(let text): lines.append("/etc/os-release:\n" + String(decoding: text, as: UTF8.self))
        case .failure(let e): lines.append("/etc/os-release: \(why(e, "/etc/os-release"))")
        }
        return .init(name: "versions.txt", bytes: Array((lines.joined(separator: "\n") + "\n").utf8), note: "")
    }

    static var swiftVersion: String {
        #if compiler(>=6.3)
        return "6.3 or later"
        #elseif compiler(>=6.2)
        return "6.2"
        #elseif compiler(>=6.1)
        return "6.1"
        #else
        return "6.0"
        #endif
    }

    /// The config (redacted), the config as the daemon reads it (for the paths it names) and the board profile.
    mutating func configuration() -> (BugReport.Part, AgentConfig, BugReport.Part) {
        if let given = report.config {
            (configPath, configOrigin) = (BugReport.absolute(given), "given with --config")
        } else if let fromUnit = unitArgument("--config") {
            (configPath, configOrigin) = (fromUnit, "the unit's --config")
        }
        var base = AgentConfig()
        let boardPart = board(into: &base)
        let configPart: BugReport.Part
        var agent = base
        switch read(configPath) {
        case .success(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                configProblem = "\(configPath) is not UTF-8 text: left out"
                return (.init(name: "config.yaml", bytes: nil, note: configProblem!), agent, boardPart)
            }
            secrets = ConfigRedaction.secrets(in: text)
            configPart = .init(name: "config.yaml", bytes: Array(ConfigRedaction.redact(text).utf8),
                               note: "\(configPath) (\(configOrigin)); secrets <redacted>")
            do {
                agent = try AgentConfig.parse(yaml: text, source: configPath, over: base)
            } catch {
                configProblem = "the config is invalid (\(error.message)); the paths below are the defaults"
            }
        case .failure(let e):
            let reason = why(e, configPath)
            if e.errno != ENOENT { configProblem = "the config could not be read; the paths below are the defaults" }
            configPart = .init(name: "config.yaml", bytes: nil, note: "\(reason) (\(configOrigin))\(e.errno == ENOENT ? "; the defaults apply" : "")")
        }
        return (configPart, agent, boardPart)
    }

    /// The board profile the unit runs with (`--board`), redacted like the config, and its settings under it.
    mutating func board(into base: inout AgentConfig) -> BugReport.Part {
        guard let name = unitArgument("--board") else {
            return .init(name: "board.yaml", bytes: nil, note: "none: \(unitState.isEmpty ? "the unit's command line is unknown" : "the unit's command line names no --board")")
        }
        let path = name.contains("/") ? name
            : BoardProfile.searchPaths().map { "\($0)/\(name).yaml" }.first { FileManager.default.fileExists(atPath: $0) }
        guard let path else { return .init(name: "board.yaml", bytes: nil, note: "board \(name.quoted) not found on the board search path") }
        switch read(path) {
        case .success(let bytes):
            let text = String(decoding: bytes, as: UTF8.self)
            var note = "\(path) (the unit's --board)"
            do {
                base = try BoardProfile.parse(yaml: text, source: path).baseConfig(module: unitArgument("--module"))
            } catch {
                note += "; not used for the paths below: \(error)"
            }
            return .init(name: "board.yaml", bytes: Array(ConfigRedaction.redact(text).utf8), note: note)
        case .failure(let e):
            return .init(name: "board.yaml", bytes: nil, note: why(e, path))
        }
    }

    /// The calibration files the config names (or the defaults); never a file that is a secret the config
    /// names, and only JSON.
    func calibrations(_ agent: AgentConfig) -> [BugReport.Part] {
        let secretFiles = [(agent.mqtt.passwordFile, "the MQTT password file (mqtt.password_file)"), (agent.mqtt.keyFile, "the TLS key (mqtt.tls.key)")]
        let files = [("calibration.json", agent.calibrationPath, agent.magnetometer.enabled ? "not calibrated yet" : "no magnetometer configured"),
                     ("accelerometer.json", agent.accelerometerCalibrationPath, agent.imu.enabled ? "not calibrated yet" : "no IMU configured"),
                     ("level.json", agent.levelPath, agent.imu.enabled ? "not measured yet" : "no IMU configured")]
        return files.map { name, path, absentBecause in
            for (file, what) in secretFiles {
                if let file, Self.sameFile(file, path) { return .init(name: name, bytes: nil, note: "left out: \(path) is \(what)") }
            }
            switch read(path, limit: 4 << 20) {
            case .success(let bytes):
                let text = String(decoding: bytes, as: UTF8.self)
                guard BugReport.trimmed(text).hasPrefix("{"), !text.contains("PRIVATE KEY") else {
                    return .init(name: name, bytes: nil, note: "left out: \(path) is not a JSON calibration file")
                }
                return .init(name: name, bytes: bytes, note: path)
            case .failure(let e):
                return .init(name: name, bytes: nil, note: why(e, path) + (e.errno == ENOENT ? " (\(absentBecause))" : ""))
            }
        }
    }

    static func sameFile(_ a: String, _ b: String) -> Bool {
        var x = stat(), y = stat()
        guard stat(a, &x) == 0, stat(b, &y) == 0 else { return a == b }
        return x.st_dev == y.st_dev && x.st_ino == y.st_ino
    }

    mutating func journal() -> BugReport.Part {
        let r = command(["journalctl", "-u", unit, "-n", "\(report.journalLines)", "--no-pager", "-o", "short-iso"], timeout: 30)
        guard r.succeeded || r.end == .timedOut, !r.stdout.isEmpty else { return .init(name: "journal.txt", bytes: nil, note: why(r, "journalctl")) }
        var notes = r.end == .timedOut ? ["journalctl timed out: what it wrote before"] : []
        if r.errorText.contains("not seeing messages from other users") {
            notes.append("partial, permission denied: only this user's own journal (run with sudo, or join group adm or systemd-journal)")
        }
        if String(decoding: r.stdout.prefix(4096), as: UTF8.self).contains("-- No entries --") {
            let said = r.errorText.split(separator: "\n").first.map { BugReport.trimmed(String($0)) } ?? ""
            notes.append(unitState["LoadState"] == "not-found" ? "no entries: unit unknown: \(unit)" : "no entries\(said.isEmpty ? "" : " (\(said))")")
        }
        if r.truncated { notes.append("cut at 16 MiB") }
        return .init(name: "journal.txt", bytes: r.stdout, note: notes.joined(separator: "; "))
    }

    /// `systemd-analyze security`, from the running systemd, else offline from the unit file.
    mutating func security() -> BugReport.Part {
        let r = command(["systemd-analyze", "security", unit, "--no-pager"], timeout: 30)
        if r.succeeded, !r.stdout.isEmpty { return .init(name: "security.txt", bytes: r.stdout, note: "") }
        let reason = why(r, "systemd-analyze")
        let files = [unitState["FragmentPath"] ?? ""] + ["/etc/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"].map { "\($0)/\(unit)" }
        guard r.end != .missing, let file = files.first(where: { !$0.isEmpty && FileManager.default.fileExists(atPath: $0) }) else {
            return .init(name: "security.txt", bytes: nil, note: reason)
        }
        let offline = command(["systemd-analyze", "security", "--offline=yes", "--no-pager", file], timeout: 30)
        guard offline.succeeded, !offline.stdout.isEmpty else {
            return .init(name: "security.txt", bytes: nil, note: "\(reason); offline: \(why(offline, "systemd-analyze"))")
        }
        return .init(name: "security.txt", bytes: offline.stdout, note: "offline, from \(file) (\(reason))")
    }

    /// The black-box ring, asked of a running daemon only: connecting to a socket-activated socket would
    /// start one.
    func blackBox(_ agent: AgentConfig) -> BugReport.Part {
        let socket = agent.socket.path
        if let state = unitState["ActiveState"], state != "active" {
            return .init(name: "blackbox.bbx", bytes: nil, note: "daemon not running: \(unit) is \(state)")
        }
        guard FileManager.default.fileExists(atPath: socket) else {
            return .init(name: "blackbox.bbx", bytes: nil, note: "daemon not running: no socket at \(socket)")
        }
        do {
            return .init(name: "blackbox.bbx", bytes: try report.blackBox(socket), note: "from \(socket)")
        } catch {
            return .init(name: "blackbox.bbx", bytes: nil, note: "\(error)")
        }
    }

    // MARK: - The manifest

    func manifest(_ parts: [BugReport.Part]) -> String {
        var lines = ["bearing report: bearing \(Release.version), \(BugReport.utc(Syscall.wallClock().seconds)), uid \(getuid())"]
        if let problem = unitProblem {
            lines.append("unit \(unit): state unknown: \(problem)")
        } else {
            let shown = ["LoadState", "ActiveState", "SubState", "MainPID", "ExecMainStatus"].compactMap { k in unitState[k].map { "\(k)=\($0)" } }
            lines.append("unit \(unit): \(shown.joined(separator: " "))")
        }
        lines.append("config: \(configPath) (\(configOrigin))")
        if let configProblem { lines.append("config: \(configProblem)") }
        lines.append("")
        let width = max(20, (parts.map(\.name.count).max() ?? 0) + 2)
        for p in parts {
            let name = p.name + String(repeating: " ", count: max(1, width - p.name.count))
            let size = p.bytes.map { "\($0.count) bytes" } ?? "not collected"
            lines.append("\(name)\(size)\(p.note.isEmpty ? "" : ": \(p.note)")")
        }
        lines.append("")
        lines.append("Commands run (how each ended, its time and its standard error):")
        for c in commands {
            lines.append(String(printf: "  %@: %@, %.2f s", c.argv.joined(separator: " "), c.outcome.summary, c.seconds))
            for line in c.outcome.errorText.split(separator: "\n").prefix(20) { lines.append("    \(line.prefix(400))") }
        }
        return clean(lines.joined(separator: "\n") + "\n")
    }
}
