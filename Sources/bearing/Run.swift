import ArgumentParser
import BearingDaemon
import BearingPOSIX
import BearingLog
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the agent: read gpsd, publish on the UNIX socket and to the log.",
        discussion: """
            Exit status: 0 stopped by SIGTERM or SIGINT; 1 could not start (a socket, bus or port it needs; \
            the log's critical line names it); 64 a wrong command line; 78 (EX_CONFIG) the config file or board \
            profile cannot be read or is invalid (one line names the file, key and value; the systemd unit does \
            not restart the service for it).
            """)

    @OptionGroup var boardOptions: BoardOptions
    @Option(help: "gpsd to read, HOST:PORT (overrides gpsd.host/gpsd.port).") var gpsd: String?
    @Option(help: "UNIX socket path (overrides socket.path).") var socket: String?
    @Option(help: ArgumentHelp("Loopback TCP door for unmodified gpsd clients, HOST:PORT, e.g. 127.0.0.1:2948 (overrides socket.tcp).",
                               valueName: "host:port")) var tcp: String?
    @Option(help: "NDJSON data log file (overrides log.data_log).") var dataLog: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical (overrides log.level).") var logLevel: String?
    @Flag(help: "Publish everything gpsd sends: no filter, no de-duplication, no throttle.") var passthrough = false

    /// The file config with the command-line overrides applied.
    func resolvedConfig() throws -> AgentConfig {
        var c = try boardOptions.resolve()
        if let gpsd {
            guard let (host, port) = HostPort.parse(gpsd) else {
                throw ValidationError("--gpsd \(gpsd): expected HOST:PORT, e.g. 127.0.0.1:2947 or [::1]:2947")
            }
            c.gpsd.host = host
            c.gpsd.port = port
        }
        if let socket { c.socket.path = SocketOptions.absolute(socket) }
        if let tcp {
            guard let hp = HostPort.parse(tcp) else {
                throw ValidationError("--tcp \(tcp): expected HOST:PORT with a numeric address, e.g. 127.0.0.1:2948 or [::1]:2948")
            }
            guard c.socket.tcpAllowRemote || TCPSocket.isLoopback(hp.host) else {
                throw ValidationError("--tcp \(tcp): not a loopback address; the TCP door has no authentication, so set socket.tcp_allow_remote: true in the config to allow it")
            }
            c.socket.tcp = hp
        }
        if let dataLog { c.log.dataLog = dataLog }
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("--log-level \(logLevel): allowed: \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            c.log.level = level
        }
        if passthrough { c.makePassthrough() }
        return c
    }

    func run() async throws {
        let config = try resolvedConfig()
        let level = config.log.level
        let logger = Logger(label: "bearing", level: level)
        Syscall.ignoreSIGPIPE()

        let daemon: Daemon
        do {
            daemon = try Daemon(config: config, logger: logger, origin: boardOptions.origin(passthrough: passthrough))
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(ExitStatus.failure)
        }
        // Start-up code (argument parsing, YAML, board profiles) is done: let its pages go.
        // BEARING_KEEP_STARTUP_PAGES=1 keeps them, for bench/footprint to measure what the process needs
        // without the page-out.
        if ProcessInfo.processInfo.environment["BEARING_KEEP_STARTUP_PAGES"] != "1" {
            if let bytes = Syscall.trimExecutableMappings() {
                logger.debug("executable mappings set to random access", metadata: ["bytes": "\(bytes)"])
            }
            // Once more when the first values have flowed: MADV_PAGEOUT leaves pages it cannot take at that
            // moment (being read in, locked, mapped by a reader started alongside); the second pass takes the
            // start-up pages the first left (bench/rss: 1.1–1.4 MB less).
            DispatchQueue.global().asyncAfter(deadline: .now() + 10) { Syscall.trimExecutableMappings() }
        }

        try await daemon.run()
    }
}
