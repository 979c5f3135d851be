import BearingModel
import BearingPOSIX
import CMosquitto
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A broker: `mqtt://HOST[:PORT]` (1883) or `mqtts://HOST[:PORT]` (8883, TLS).
public struct MQTTBroker: Equatable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var tls: Bool

    public init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Parses a broker URL; nil (with why) when it is not one. The errors quote the URL without its user
    /// and password (`shown`), control characters escaped.
    public static func parse(_ url: String) -> Result<MQTTBroker, MQTTError> {
        let what = "broker \(shown(url).quoted)"
        let scheme: String, tls: Bool
        if url.hasPrefix("mqtt://") { (scheme, tls) = ("mqtt://", false) } else if url.hasPrefix("mqtts://") { (scheme, tls) = ("mqtts://", true) } else {
            return .failure(MQTTError("\(what): not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"))
        }
        var rest = Substring(url.dropFirst(scheme.count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.isEmpty else { return .failure(MQTTError("\(what): no host, e.g. \(scheme)broker.example.net")) }
        guard !rest.contains("/"), !rest.contains("@") else {
            return .failure(MQTTError("\(what): only a host and a port (user and password go in mqtt.username and mqtt.password_file)"))
        }
        guard !rest.hasControlCharacter, !rest.contains(" ") else {
            return .failure(MQTTError("\(what): a space or control character in the host"))
        }
        var host = String(rest), port = tls ? 8883 : 1883
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return .failure(MQTTError("\(what): an IPv6 address without its ]")) }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else {
                    return .failure(MQTTError("\(what): the port after ]: is not 1–65535"))
                }
                port = p
            }
        } else if let colon = rest.lastIndex(of: ":") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                return .failure(MQTTError("\(what): the port \"\(rest[rest.index(after: colon)...])\" is not 1–65535"))
            }
            host = String(rest[..<colon])
            port = p
        }
        guard !host.isEmpty else { return .failure(MQTTError("\(what): no host")) }
        return .success(MQTTBroker(host: host, port: port, tls: tls))
    }

    /// `url` as errors may quote it: a user and password before `@` become `***`.
    public static func shown(_ url: String) -> String {
        let start = url.firstRange(of: "://")?.upperBound ?? url.startIndex
        let authority = url[start...].prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@") else { return url }
        return url[..<start] + "***" + url[at...]
    }

    public var description: String { "\(tls ? "mqtts" : "mqtt")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// What went wrong talking to a broker, in words that name the step.
public struct MQTTError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    /// A libmosquitto result, for `operation`.
    static func mosquitto(_ operation: String, _ rc: Int32, errno e: Int32 = Glibc.errno, log: [String] = [],
                          names: MQTTSettingNames = .config) -> MQTTError {
        var text = reason(rc, errno: e)
        if !log.isEmpty { text += " (" + log.joined(separator: "; ") + ")" }
        return MQTTError("\(operation): \(text)" + (explainTLS(text, names: names).map { ": \($0)" } ?? ""))
    }

    /// A libmosquitto result in words; `e` is errno read right after it. The end of the stream is
    /// MOSQ_ERR_CONN_LOST between packets but MOSQ_ERR_ERRNO with errno 0 (strerror's "Success") within one.
    public static func reason(_ rc: Int32, errno e: Int32) -> String {
        switch rc {
        case Int32(MOSQ_ERR_ERRNO.rawValue) where e == 0, Int32(MOSQ_ERR_CONN_LOST.rawValue) where e != ECONNRESET:
            return "the broker closed the connection"
        case Int32(MOSQ_ERR_CONN_LOST.rawValue): return "the connection was reset"
        case Int32(MOSQ_ERR_ERRNO.rawValue): return String(cString: strerror(e))
        case Int32(MOSQ_ERR_MALFORMED_PACKET.rawValue): return "a malformed packet"
        case 128...255:
            // An MQTT 5 broker's DISCONNECT gives its reason code (libmosquitto's own results are below 128).
            return "the broker ended the connection: \(String(cString: mosquitto_reason_string(rc)))"
        default:
            let text = String(cString: mosquitto_strerror(rc))
            return text.hasSuffix(".") ? String(text.dropLast()) : text
        }
    }

    /// What OpenSSL's reasons (as libmosquitto logs them) mean for the settings `names` calls so, or nil.
    public static func explainTLS(_ text: String, names: MQTTSettingNames = .config) -> String? {
        let hints: [(String, String)] = [
            ("certificate verify failed", "the broker's certificate does not verify against \(names.ca) (signed by another CA, expired or not yet valid, or not issued for this host name)"),
            ("alert certificate required", "the broker wants a client certificate: set \(names.certificate) and \(names.key)"),
            ("alert certificate expired", "the broker refuses the client certificate (\(names.certificate)) as expired"),
            ("alert unknown ca", "the broker does not trust the CA that signed the client certificate (\(names.certificate))"),
            ("alert bad certificate", "the broker refuses the client certificate (\(names.certificate))"),
            ("wrong version number", "the port does not speak TLS: is it a plain mqtt:// listener?"),
        ]
        return hints.first { text.contains($0.0) }?.1
    }
}

/// What hints call the settings to change: the daemon's config keys, or a command's options.
public struct MQTTSettingNames: Equatable, Sendable {
    public var ca: String
    public var certificate: String
    public var key: String
    public var username: String
    public var passwordFile: String

    public init(ca: String, certificate: String, key: String, username: String, passwordFile: String) {
        self.ca = ca
        self.certificate = certificate
        self.key = key
        self.username = username
        self.passwordFile = passwordFile
    }

    /// The daemon's `mqtt` config keys.
    public static let config = MQTTSettingNames(ca: "mqtt.tls.ca", certificate: "mqtt.tls.certificate", key: "mqtt.tls.key",
                                                username: "mqtt.username", passwordFile: "mqtt.password_file")
}

/// A connection failure that trying again cannot fix: a setting must change.
public struct MQTTRefusal: Equatable, Sendable {
    /// The broker's CONNACK return code, 4 (bad user name or password) or 5 (not authorised); nil for a TLS failure.
    public var connackCode: Int32?
    /// What to change, in the configuration's `settingNames` (the reason ends with it too).
    public var hint: String
}

/// A secret read from a file: never printed.
public struct Secret: Equatable, Sendable, CustomStringConvertible {
    public let value: String

    /// The first line of `file` (a password file: the line, not its newline).
    public static func firstLine(of file: String) throws(SystemError) -> Secret {
        let text = try AtomicFile.readText(file, limit: 4096)
        return Secret(String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? ""))
    }
    public init(_ value: String) { self.value = value }
    public var description: String { "(secret)" }
}

/// The MQTT version a client speaks to its broker.
public enum MQTTProtocolVersion: String, Equatable, Sendable, CaseIterable {
    /// MQTT 5: the CONNECT says the largest packet the client takes (Maximum Packet Size), and the broker sends
    /// none larger.
    case v5 = "5"
    /// MQTT 3.1.1: a broker sends a packet of any size, which libmosquitto holds whole before the client sees it.
    case v311 = "3.1.1"
}

/// One connection to a broker, inside the client's thread: publish from the delegate's calls only.
public final class MQTTSession {
    fileprivate let mosq: OpaquePointer

    fileprivate init(_ mosq: OpaquePointer) { self.mosq = mosq }

    /// Queues a message; returns its message id (what `didAcknowledge` reports for QoS 1).
    @discardableResult
    public func publish(_ topic: String, _ payload: String, qos: Int32 = 1, retain: Bool = false) throws(MQTTError) -> Int32 {
        var mid: Int32 = 0
        var payload = payload
        let rc = payload.withUTF8 { mosquitto_publish(mosq, &mid, topic, Int32($0.count), $0.baseAddress, qos, retain) }
        guard rc == 0 else { throw MQTTError.mosquitto("publish \(topic)", rc) }
        return mid
    }

    /// Subscribes to `filter` (QoS 1).
    public func subscribe(_ filter: String) throws(MQTTError) {
        let rc = mosquitto_subscribe(mosq, nil, filter, 1)
        guard rc == 0 else { throw MQTTError.mosquitto("subscribe \(filter)", rc) }
    }
}

/// A message the broker delivered to a subscription.
public struct MQTTMessage: Equatable, Sendable {
    public var topic: String
    /// The payload; empty when it is longer than the client's `maxMessageBytes` (`isOversized`).
    public var payload: [UInt8]
    public var retained: Bool
    /// The payload's length as the broker sent it.
    public var size: Int
    /// Longer than the client's `maxMessageBytes`: only its `size` was kept, not its bytes.
    public var isOversized: Bool { size != payload.count }
}

/// What an `MQTTClient` reports, on its thread.
public protocol MQTTClientDelegate: AnyObject, Sendable {
    /// The broker accepted the connection: subscribe, publish retained state.
    func mqttClient(_ client: MQTTClient, didConnect session: MQTTSession)
    /// The connection failed or ended; the next attempt is in `retryIn` seconds (attempt `attempt`). `refusal`
    /// says when trying again cannot help (the client still tries, until stopped).
    func mqttClient(_ client: MQTTClient, didDisconnect reason: String, refusal: MQTTRefusal?, attempt: Int, retryIn: Double)
    /// Connected and woken (`wake()`), or an acknowledgement came: publish what is waiting.
    func mqttClient(_ client: MQTTClient, maySend session: MQTTSession)
    /// The broker acknowledged the QoS 1 message `mid`.
    func mqttClient(_ client: MQTTClient, didAcknowledge mid: Int32, session: MQTTSession)
    func mqttClient(_ client: MQTTClient, didReceive message: MQTTMessage, session: MQTTSession)
    /// About once a second, with the session when connected.
    func mqttClientTick(_ client: MQTTClient, session: MQTTSession?)
    /// The client is stopping while connected: the last messages (a retained `offline`) go now.
    func mqttClient(_ client: MQTTClient, willClose session: MQTTSession)
    /// The broker refused MQTT 5's CONNECT as an unsupported protocol version: the client speaks 3.1.1 to it from
    /// now on (`protocolVersion`) and connects again at once. Called once per client.
    func mqttClient(_ client: MQTTClient, brokerSpeaks311Only refusal: String)
}

extension MQTTClientDelegate {
    public func mqttClient(_ client: MQTTClient, brokerSpeaks311Only refusal: String) {}
}

/// An MQTT 5 client over libmosquitto (3.1.1 for a broker that refuses 5, or when configured so), owning its
/// connection on a thread of its own: it connects,
/// keeps the connection alive and reconnects after 1 s, 2 s, 4 s … up to `retryMax`, each delay
/// shortened by a random part of up to half (so that a fleet does not come back all at once), for ever.
///
/// The thread runs its own loop rather than libmosquitto's `mosquitto_loop_start`: libmosquitto's
/// reconnect delay has no jitter, and with the socket and an eventfd in one `poll` a `wake()` from the
/// pipeline sends at once and a stop is seen at once, even while a connection is being made
/// (`mosquitto_connect_async`: only the name lookup blocks). Each connection is a fresh libmosquitto
/// object with a clean session, so nothing libmosquitto queued survives a reconnect: the caller's spool
/// is the only record of what is unacknowledged and is sent again in order.
public final class MQTTClient: Sendable {
    public struct Configuration: Equatable, Sendable {
        public var broker: MQTTBroker
        public var clientID: String
        public var username: String?
        public var password: Secret?
        /// TLS: the CA file (nil: the system's CAs), and a client certificate and key.
        public var caFile: String?
        public var certificateFile: String?
        public var keyFile: String?
        public var keepalive: Int = 60
        /// The last will: published by the broker when the connection dies without a DISCONNECT.
        public var will: (topic: String, payload: String)?
        public var retryInitial: Double = 1
        public var retryMax: Double = 120
        /// A connection with no CONNACK after this many seconds is given up and tried again.
        public var connectTimeout: Double = 30
        /// What the hints of refusals call the settings (the daemon's config keys by default).
        public var settingNames: MQTTSettingNames = .config
        /// A received payload longer than this is not copied: the delegate gets its size only (nil: no bound).
        public var maxMessageBytes: Int?
        /// The version tried first: `.v5` falls back to 3.1.1, for good, with a broker that refuses it.
        public var protocolVersion: MQTTProtocolVersion = .v5
        /// Told to an MQTT 5 broker as CONNECT's Maximum Packet Size: it sends no larger packet, so a message too
        /// large for the client is dropped by the broker, not sent (nil: no bound). See `publishPacketBound`.
        public var maxPacketBytes: Int?

        public init(broker: MQTTBroker, clientID: String) {
            self.broker = broker
            self.clientID = clientID
        }

        public static func == (a: Configuration, b: Configuration) -> Bool {
            a.broker == b.broker && a.clientID == b.clientID && a.username == b.username && a.password == b.password
                && a.caFile == b.caFile && a.certificateFile == b.certificateFile && a.keyFile == b.keyFile
                && a.keepalive == b.keepalive && a.will?.topic == b.will?.topic && a.will?.payload == b.will?.payload
                && a.retryInitial == b.retryInitial && a.retryMax == b.retryMax && a.connectTimeout == b.connectTimeout
                && a.settingNames == b.settingNames && a.maxMessageBytes == b.maxMessageBytes
                && a.protocolVersion == b.protocolVersion && a.maxPacketBytes == b.maxPacketBytes
        }
    }

    /// What a publisher may add to a message as MQTT 5 properties (a content type, user properties, the
    /// message expiry) and the broker forwards: room kept for them in `publishPacketBound`.
    public static let propertyAllowance = 1024

    /// The largest PUBLISH packet that carries a payload of `payload` bytes on one of `topics`, counted as MQTT 5's
    /// Maximum Packet Size counts (the whole packet): the fixed header (1 byte and a remaining length of up to
    /// 4), the topic (2 bytes of length and its UTF-8), the packet identifier (2, QoS 1), the properties' length
    /// (up to 4) and `propertyAllowance` bytes of them, then the payload.
    public static func publishPacketBound(payload: Int, topics: [String]) -> Int {
        let topic = topics.map(\.utf8.count).max() ?? 0
        return 1 + 4 + 2 + topic + 2 + 4 + propertyAllowance + payload
    }

    public let configuration: Configuration
    private let delegate: any MQTTClientDelegate
    private let worker: WorkerThread
    private let wakeFD: Int32
    /// What the client speaks to the broker: the configuration's version, until a broker refuses 5.
    private struct Speaking {
        var version: MQTTProtocolVersion
        /// Why the last MQTT 5 attempt looked like a 3.1.1 broker's answer: the next attempt tries 3.1.1, and the
        /// version becomes 3.1.1 if the broker accepts it.
        var probe311: String?
        /// The broker refused MQTT 5 (its reason), not told to the delegate yet.
        var untold: String?
    }
    private let speaking: Mutex<Speaking>

    public init(configuration: Configuration, delegate: any MQTTClientDelegate) throws(SystemError) {
        self.configuration = configuration
        self.delegate = delegate
        worker = WorkerThread(name: "bearing-mqtt")
        speaking = Mutex(Speaking(version: configuration.protocolVersion))
        wakeFD = try Syscall.eventFD()
        _ = mosquitto_lib_init()
    }

    deinit { close(wakeFD) }

    /// libmosquitto's version, for the log.
    public static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, revision: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }

    public func start() { worker.start { [self] in run() } }

    /// The MQTT version the client speaks to the broker: 3.1.1 once a broker refused 5.
    public var protocolVersion: MQTTProtocolVersion { speaking.withLock { $0.version } }

    /// Sends what waits, from any thread: the loop calls `maySend` when connected.
    public func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Stops the loop: a connected client first lets the delegate send its last messages and disconnects
    /// cleanly (the broker then does not publish the will). Waits for the thread.
    public func stop() {
        worker.requestStop()
        wake()
        worker.stop()
    }

    // MARK: The thread

    private func run() {
        var backoff = Backoff(initial: configuration.retryInitial, maximum: configuration.retryMax)
        while !worker.isStopping {
            var refusal: MQTTRefusal?
            let reason = session(&backoff, &refusal)
            if worker.isStopping { break }
            let (untold, probing) = speaking.withLock { s in
                defer { s.untold = nil }
                return (s.untold, s.probe311 != nil)
            }
            // The broker refused MQTT 5 itself, or seemed to: 3.1.1 at once, not after a delay.
            if let untold {
                delegate.mqttClient(self, brokerSpeaks311Only: untold)
                continue
            }
            if probing { continue }
            let delay = backoff.delay() * Double.random(in: 0.5...1)
            delegate.mqttClient(self, didDisconnect: reason, refusal: refusal, attempt: backoff.attempt, retryIn: delay)
            // Ticks go on while waiting, a second at a time.
            let until = Syscall.monotonicSeconds() + delay
            while !worker.isStopping, Syscall.monotonicSeconds() < until {
                guard worker.pause(until: min(until, Syscall.monotonicSeconds() + 1)) else { break }
                delegate.mqttClientTick(self, session: nil)
            }
        }
    }

    /// One connection, from connecting to its end; returns why it ended, and sets `refusal` when trying
    /// again cannot help.
    private func session(_ backoff: inout Backoff, _ refusal: inout MQTTRefusal?) -> String {
        let (established, probe) = self.speaking.withLock { ($0.version, $0.probe311) }
        let speaking: MQTTProtocolVersion = probe == nil ? established : .v311
        let box = CallbackBox(configuration, version: speaking)
        let context = Unmanaged.passRetained(box)
        defer { context.release() }
        defer {
            self.speaking.withLock { s in
                if box.refusedMQTT5 {
                    s.version = .v311
                    s.untold = box.refused
                } else if speaking == .v5, let why = box.maybe311 {
                    s.probe311 = why
                } else {
                    // A 3.1.1 attempt after an MQTT 5 one that looked like a 3.1.1 broker's answer has ended: accepted
                    // (the version is 3.1.1 now), or not (MQTT 5 again).
                    s.probe311 = nil
                }
            }
            // OpenSSL's reasons are among libmosquitto's error log lines.
            let tlsHint = configuration.broker.tls ? MQTTError.explainTLS(box.errors.joined(separator: "; "), names: configuration.settingNames) : nil
            refusal = box.refusal ?? tlsHint.map { MQTTRefusal(connackCode: nil, hint: $0) }
        }
        guard let mosq = mosquitto_new(configuration.clientID, true, context.toOpaque()) else {
            return "libmosquitto: cannot make a client: \(String(cString: strerror(errno)))"
        }
        defer { mosquitto_destroy(mosq) }
        let session = MQTTSession(mosq)
        do throws(MQTTError) { try configure(mosq, speaking) } catch { return error.message }

        let target = "\(configuration.broker)"
        var rc: Int32
        if speaking == .v5, let bound = configuration.maxPacketBytes {
            var properties: OpaquePointer?
            defer { mosquitto_property_free_all(&properties) }
            rc = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(clamping: bound))
            guard rc == 0 else { return MQTTError.mosquitto("CONNECT property Maximum Packet Size \(bound)", rc).message }
            rc = bearing_mosq_connect_async_v5(mosq, configuration.broker.host, Int32(configuration.broker.port), Int32(configuration.keepalive), properties)
        } else {
            rc = mosquitto_connect_async(mosq, configuration.broker.host, Int32(configuration.broker.port), Int32(configuration.keepalive))
        }
        guard rc == 0 else { return MQTTError.mosquitto("connect \(target)", rc, log: box.errors, names: configuration.settingNames).message }
        let connectDeadline = Syscall.monotonicSeconds() + configuration.connectTimeout
        var lastMisc = Syscall.monotonicSeconds()
        var stopping = false
        var stopDeadline = Double.infinity
        while true {
            if !stopping && worker.isStopping {
                guard box.connected else { return "stopped" }
                stopping = true
                // The last messages and the DISCONNECT get 2 s: a broker that does not read is not waited for.
                stopDeadline = Syscall.monotonicSeconds() + 2
                delegate.mqttClient(self, willClose: session)
                _ = mosquitto_disconnect(mosq)
            }
            if stopping && Syscall.monotonicSeconds() > stopDeadline { return "stopped" }
            let fd = mosquitto_socket(mosq)
            guard fd >= 0 else {
                return box.disconnectReason ?? (box.refused ?? "connection to \(target) closed")
            }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN) | (mosquitto_want_write(mosq) ? Int16(POLLOUT) : 0), revents: 0),
                       pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            do throws(SystemError) {
                _ = try Syscall.check("poll", target) { poll(&fds, 2, 1000) }
            } catch {
                return error.description
            }
            if fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                rc = mosquitto_loop_read(mosq, 1)
                if rc != 0 {
                    let text = MQTTError.mosquitto("read from \(target)", rc, log: box.errors, names: configuration.settingNames).message
                    // libmosquitto 2.0.21 reads a 3.1.1 broker's refusal of MQTT 5 (CONNACK 1, without MQTT 5's
                    // properties) as a malformed packet and says nothing else (2.0.11 reports it as reason 132):
                    // such an answer to MQTT 5's CONNECT is tried with 3.1.1 next.
                    if speaking == .v5 && !box.accepted && box.refused == nil
                        && (rc == Int32(MOSQ_ERR_MALFORMED_PACKET.rawValue) || rc == Int32(MOSQ_ERR_PROTOCOL.rawValue)) {
                        box.maybe311 = "the broker answered MQTT 5's CONNECT with a packet that is not MQTT 5's CONNACK (\(text))"
                    }
                    return ended(box, text)
                }
            }
            if fds[0].revents & Int16(POLLOUT) != 0 {
                rc = mosquitto_loop_write(mosq, 1)
                if rc != 0 { return ended(box, MQTTError.mosquitto("write to \(target)", rc, log: box.errors, names: configuration.settingNames).message) }
            }
            if let refused = box.refused { return refused }
            if box.justConnected {
                box.justConnected = false
                box.errors = []
                backoff.reset()
                if let probe {
                    // 3.1.1 accepted where MQTT 5 was not: the broker speaks 3.1.1 only.
                    self.speaking.withLock { $0.version = .v311 }
                    delegate.mqttClient(self, brokerSpeaks311Only: probe)
                }
                delegate.mqttClient(self, didConnect: session)
                delegate.mqttClient(self, maySend: session)
            }
            for mid in box.takeAcknowledged() { delegate.mqttClient(self, didAcknowledge: mid, session: session) }
            for m in box.takeMessages() { delegate.mqttClient(self, didReceive: m, session: session) }
            if fds[1].revents & Int16(POLLIN) != 0 {
                var count: UInt64 = 0
                _ = read(wakeFD, &count, 8)
                if box.connected && !stopping { delegate.mqttClient(self, maySend: session) }
            }
            if stopping && !box.connected { return "stopped" }
            let now = Syscall.monotonicSeconds()
            if !box.connected && now > connectDeadline {
                return "connect \(target): no answer (CONNACK) in \(Int(configuration.connectTimeout)) s"
            }
            if now - lastMisc >= 1 {
                lastMisc = now
                rc = mosquitto_loop_misc(mosq)
                if rc != 0 && rc != Int32(MOSQ_ERR_NO_CONN.rawValue) {
                    return ended(box, MQTTError.mosquitto("keepalive with \(target)", rc, log: box.errors, names: configuration.settingNames).message)
                }
                delegate.mqttClientTick(self, session: box.connected && !stopping ? session : nil)
            }
        }
    }

    private func ended(_ box: CallbackBox, _ fallback: String) -> String {
        box.refused ?? box.disconnectReason ?? fallback
    }

    /// An MQTT 5 CONNACK reason code as MQTT 3.1.1's return code of the same meaning (so that a refusal reads,
    /// and is told apart, the same with either version); nil for one 3.1.1 has no code for.
    static func connackCode311(_ reason: Int32) -> Int32? {
        switch reason {
        case Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue): return 1
        case Int32(MQTT_RC_CLIENTID_NOT_VALID.rawValue): return 2
        case Int32(MQTT_RC_SERVER_UNAVAILABLE.rawValue): return 3
        case Int32(MQTT_RC_BAD_USERNAME_OR_PASSWORD.rawValue): return 4
        case Int32(MQTT_RC_NOT_AUTHORIZED.rawValue): return 5
        default: return nil
        }
    }

    private func configure(_ mosq: OpaquePointer, _ speaking: MQTTProtocolVersion) throws(MQTTError) {
        let level = speaking == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        var rc = mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, level)
        guard rc == 0 else { throw MQTTError.mosquitto("MQTT protocol version \(speaking.rawValue)", rc) }
        rc = mosquitto_max_inflight_messages_set(mosq, 0) // Bearing keeps its own window
        guard rc == 0 else { throw MQTTError.mosquitto("libmosquitto's in-flight bound (none: Bearing keeps its own window)", rc) }
        // The result is the CONNACK's code: 3.1.1's return code, or MQTT 5's reason code.
        mosquitto_connect_callback_set(mosq) { _, context, result in
            let box = Unmanaged<CallbackBox>.fromOpaque(context!).takeUnretainedValue()
            if result == 0 {
                box.connected = true
                box.accepted = true
                box.justConnected = true
            } else if box.version == .v5 && result == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue) {
                // libmosquitto reports a 3.1.1 broker's CONNACK 1 to an MQTT 5 CONNECT as this reason too.
                box.refusedMQTT5 = true
                box.refused = "the broker refused MQTT 5: \(String(cString: mosquitto_reason_string(result)))"
            } else {
                let rc = box.version == .v5 ? MQTTClient.connackCode311(result) ?? result : result
                let text = rc < 128 ? String(cString: mosquitto_connack_string(rc)) : String(cString: mosquitto_reason_string(rc))
                let refused = "the broker refused the connection: \(text)"
                // A bad user name or password (4), or not authorised (5): trying again cannot help.
                guard rc == 4 || rc == 5 else { box.refused = refused; return }
                let names = box.settingNames
                let hint = box.hasUsername
                    ? "the broker does not accept this user and password: check \(names.username) and \(names.passwordFile)"
                    : "the broker wants a user name and password: set \(names.username) and \(names.passwordFile)"
                box.refusal = MQTTRefusal(connackCode: rc, hint: hint)
                box.refused = "\(refused.hasSuffix(".") ? String(refused.dropLast()) : refused): \(hint)"
            }
        }
        mosquitto_disconnect_callback_set(mosq) { _, context, rc in
            let e = errno
            let box = Unmanaged<CallbackBox>.fromOpaque(context!).takeUnretainedValue()
            box.connected = false
            if rc != 0 && box.disconnectReason == nil {
                let text = MQTTError.reason(rc, errno: e) + (box.errors.isEmpty ? "" : " (\(box.errors.joined(separator: "; ")))")
                box.disconnectReason = "connection lost: \(text)" + (MQTTError.explainTLS(text, names: box.settingNames).map { ": \($0)" } ?? "")
            }
        }
        mosquitto_publish_callback_set(mosq) { _, context, mid in
            Unmanaged<CallbackBox>.fromOpaque(context!).takeUnretainedValue().acknowledged.append(mid)
        }
        mosquitto_message_callback_set(mosq) { _, context, message in
            guard let m = message?.pointee else { return }
            let box = Unmanaged<CallbackBox>.fromOpaque(context!).takeUnretainedValue()
            let size = Int(m.payloadlen)
            let payload = size > 0 && size <= box.maxMessageBytes ? Array(UnsafeRawBufferPointer(start: m.payload, count: size)) : []
            box.messages.append(MQTTMessage(topic: String(cString: m.topic), payload: payload, retained: m.retain, size: size))
        }
        mosquitto_log_callback_set(mosq) { _, context, level, text in
            guard level & Int32(MOSQ_LOG_ERR) != 0, let text else { return }
            let box = Unmanaged<CallbackBox>.fromOpaque(context!).takeUnretainedValue()
            if box.errors.count < 4 { box.errors.append(String(cString: text)) }
        }
        if let username = configuration.username {
            let rc = mosquitto_username_pw_set(mosq, username, configuration.password?.value)
            guard rc == 0 else { throw MQTTError.mosquitto(configuration.settingNames.username, rc) }
        }
        if let will = configuration.will {
            // The same call for MQTT 5 (the will without properties) and 3.1.1.
            let bytes = Array(will.payload.utf8)
            let rc = bytes.withUnsafeBytes { mosquitto_will_set(mosq, will.topic, Int32($0.count), $0.baseAddress, 1, true) }
            guard rc == 0 else { throw MQTTError.mosquitto("last will on \(will.topic)", rc) }
        }
        if configuration.broker.tls {
            // No CA file: the system's trust store (Debian's ca-certificates).
            let capath = configuration.caFile == nil ? "/etc/ssl/certs" : nil
            let rc = mosquitto_tls_set(mosq, configuration.caFile, capath, configuration.certificateFile, configuration.keyFile, nil)
            guard rc == 0 else {
                throw MQTTError.mosquitto("TLS files (mqtt.tls: ca \(configuration.caFile ?? "system"), certificate \(configuration.certificateFile ?? "none"), key \(configuration.keyFile ?? "none"))", rc)
            }
        }
    }
}

/// What libmosquitto's callbacks report during one call into it; read by the loop right after.
private final class CallbackBox {
    let settingNames: MQTTSettingNames
    let hasUsername: Bool
    let maxMessageBytes: Int
    /// What this connection speaks.
    let version: MQTTProtocolVersion
    var connected = false
    /// The broker refused MQTT 5 as an unsupported protocol version.
    var refusedMQTT5 = false
    /// The broker accepted the connection (CONNACK 0).
    var accepted = false
    /// Why MQTT 5's CONNECT seemed to reach a broker that speaks 3.1.1 only (nil: it did not).
    var maybe311: String?
    var justConnected = false
    var refused: String?
    /// Set with `refused` when trying again cannot help.
    var refusal: MQTTRefusal?
    var disconnectReason: String?
    var acknowledged: [Int32] = []
    var messages: [MQTTMessage] = []
    /// libmosquitto's error log lines (OpenSSL's reasons among them), for the next error message.
    var errors: [String] = []

    init(_ configuration: MQTTClient.Configuration, version: MQTTProtocolVersion) {
        self.version = version
        settingNames = configuration.settingNames
        hasUsername = configuration.username != nil
        maxMessageBytes = configuration.maxMessageBytes ?? .max
    }

    func takeAcknowledged() -> [Int32] {
        defer { acknowledged = [] }
        return acknowledged
    }
    func takeMessages() -> [MQTTMessage] {
        defer { messages = [] }
        return messages
    }
}
