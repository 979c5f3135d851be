import ArgumentParser
import BearingDaemon
import BearingModel
import BearingMQTT
#if canImport(Glibc)
import Glibc
#endif

/// `bearing watch --mqtt URL`: the broker, the devices' topic root, and what a fleet's broker asks of its
/// clients: TLS files and a user name with a password read from a file (a password on the command line
/// would show in ps and /proc).
struct MQTTWatchOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Watch a fleet on its MQTT broker instead: every device's status, TPV, ATT, SKY, SPOOL and fleet pipelines status.", valueName: "url"))
    var mqtt: String?
    @Option(help: ArgumentHelp("With --mqtt: the devices' topics are ROOT/DEVICE/… (their default prefix bearing/DEVICE). Default: bearing.", valueName: "root"))
    var mqttRoot: String?
    @Option(name: .customLong("mqtt-ca"), help: ArgumentHelp("With an mqtts:// broker: the CA file its certificate must verify against (default: the system's CAs in /etc/ssl/certs).", valueName: "file"))
    var mqttCA: String?
    @Option(help: ArgumentHelp("With an mqtts:// broker that wants client certificates: this one (PEM), with --mqtt-key.", valueName: "file"))
    var mqttCertificate: String?
    @Option(help: ArgumentHelp("The private key (PEM) of --mqtt-certificate.", valueName: "file"))
    var mqttKey: String?
    @Option(help: ArgumentHelp("With --mqtt: the user name to connect as.", valueName: "name"))
    var mqttUsername: String?
    @Option(help: ArgumentHelp("With --mqtt-username: the file whose first line is the password (kept off the command line, where ps shows it).", valueName: "file"))
    var mqttPasswordFile: String?

    /// What the client's hints call the settings: these options.
    static let settingNames = MQTTSettingNames(ca: "--mqtt-ca", certificate: "--mqtt-certificate", key: "--mqtt-key",
                                               username: "--mqtt-username", passwordFile: "--mqtt-password-file")

    func validate() throws {
        guard let mqtt else {
            let given = [("--mqtt-root", mqttRoot), ("--mqtt-ca", mqttCA), ("--mqtt-certificate", mqttCertificate), ("--mqtt-key", mqttKey),
                         ("--mqtt-username", mqttUsername), ("--mqtt-password-file", mqttPasswordFile)].filter { $0.1 != nil }.map(\.0)
            if !given.isEmpty { throw ValidationError("\(given.joined(separator: ", ")): only with --mqtt URL") }
            return
        }
        let broker = try self.broker(mqtt)
        if !broker.tls, let option = [("--mqtt-ca", mqttCA), ("--mqtt-certificate", mqttCertificate), ("--mqtt-key", mqttKey)].first(where: { $0.1 != nil })?.0 {
            throw ValidationError("\(option): only for an mqtts:// broker (--mqtt \(mqtt) is plain MQTT)")
        }
        if (mqttCertificate == nil) != (mqttKey == nil) {
            throw ValidationError("--mqtt-certificate and --mqtt-key go together: give both or neither")
        }
        if mqttUsername?.isEmpty == true { throw ValidationError("--mqtt-username: empty") }
        if mqttPasswordFile != nil && mqttUsername == nil {
            throw ValidationError("--mqtt-password-file needs --mqtt-username")
        }
    }

    private func broker(_ url: String) throws -> MQTTBroker {
        switch MQTTBroker.parse(url) {
        case .success(let broker): return broker
        case .failure where url.contains("@"):
            throw ValidationError("--mqtt \(url): only a host and a port; the user name goes in --mqtt-username and the password in --mqtt-password-file")
        case .failure:
            throw ValidationError("--mqtt \(url): expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
        }
    }

    /// The client's configuration for `--mqtt`, nil without it: the password read from its file, the TLS
    /// files checked readable (libmosquitto would otherwise fail every attempt, for ever).
    func clientConfiguration(clientID: String) throws -> MQTTClient.Configuration? {
        guard let mqtt else { return nil }
        var configuration = MQTTClient.Configuration(broker: try broker(mqtt), clientID: clientID)
        configuration.settingNames = Self.settingNames
        configuration.username = mqttUsername
        if let file = mqttPasswordFile { configuration.password = try Self.password(from: file) }
        for (option, file) in [("--mqtt-ca", mqttCA), ("--mqtt-certificate", mqttCertificate), ("--mqtt-key", mqttKey)] {
            guard let file else { continue }
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw WatchError("\(option) \(file): \(String(cString: strerror(errno)))") }
            close(fd)
        }
        configuration.caFile = mqttCA
        configuration.certificateFile = mqttCertificate
        configuration.keyFile = mqttKey
        return configuration
    }

    /// The first line of `file`, as the daemon reads `mqtt.password_file`.
    static func password(from file: String) throws -> Secret {
        do {
            return try Secret.firstLine(of: file)
        } catch {
            throw WatchError("--mqtt-password-file \(file): \(error.message) (errno \(error.errno))")
        }
    }
}
