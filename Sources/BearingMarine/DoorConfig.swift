import BearingWire
import BearingPOSIX
import BearingConfig
import BearingYAML
#if canImport(Glibc)
import Glibc
#endif

/// Where a door writes: TCP listeners (any number of readers, one line per message, CRLF) and UDP
/// destinations (one datagram per message, unicast or broadcast).
public struct DoorOutputs: Equatable, Sendable {
    public var tcp: [EchoGuard.Endpoint] = []
    public var udp: [EchoGuard.Endpoint] = []
    /// TCP listeners on an address other than loopback (no authentication: anyone who reaches the port reads).
    public var allowRemote = false
    /// TCP readers at once, over all of this door's listeners.
    public var maxClients = 16
    /// Lines queued per TCP reader before its lines are dropped (a reader that stops reading loses
    /// sentences, never holds up the others).
    public var clientQueue = 64

    public init() {}

    /// No output: the door is off.
    public var isEmpty: Bool { tcp.isEmpty && udp.isEmpty }
}

/// The NMEA 0183 door (config `nmea0183:`): heading, attitude, rate of turn and, optionally, RMC as
/// sentences for chart plotters, autopilots and multiplexers. Off until it has an output.
public struct NMEA0183DoorConfig: Equatable, Sendable {
    public var outputs = DoorOutputs()
    /// The talker ID the sentences carry (see `NMEA0183Encoder`).
    public var talker = NMEA0183Encoder().talker
    /// Each sentence sent, with the chain that sets its rate over the compass's ATT (RMC: over gpsd's TPV).
    /// Sentences with equal chains share one run, so they go out together, from the same instant.
    public var sentences: [NMEA0183SentenceType: [OperatorSpec]] = NMEA0183DoorConfig.defaultSentences

    public init() {}

    /// Heading 5 Hz (what plotters and autopilots read smoothly), attitude and rate of turn 2 Hz; RMC off
    /// (the GPS usually sends its own; turn it on for a magnetic variation the GPS leaves blank).
    public static let defaultSentences: [NMEA0183SentenceType: [OperatorSpec]] = [
        .hdt: [.throttle(interval: 0.2, latest: true)], .hdm: [.throttle(interval: 0.2, latest: true)],
        .hdg: [.throttle(interval: 0.2, latest: true)],
        .rot: [.throttle(interval: 0.5, latest: true)], .xdr: [.throttle(interval: 0.5, latest: true)],
    ]
    /// The chain a sentence gets when the config only turns it on (`rmc: true`).
    public static func defaultChain(_ type: NMEA0183SentenceType) -> [OperatorSpec] {
        defaultSentences[type] ?? [.throttle(interval: 1, latest: true)]
    }

    /// gpsd reading this door sends its output back as ATT/TPV from these devices.
    public var echoGuard: EchoGuard { EchoGuard(tcp: outputs.tcp, udp: outputs.udp) }
}

/// The Signal K door (config `signalk:`): deltas for a Signal K server's UDP input and for Signal K TCP
/// readers. Off until it has an output.
public struct SignalKDoorConfig: Equatable, Sendable {
    public var outputs = DoorOutputs()
    /// The `$source` label of every update.
    public var source = SignalKSource().label
    /// The chain over the compass's ATT: heading, variation, attitude, rate of turn.
    public var attitude: [OperatorSpec] = [.throttle(interval: 0.2, latest: true)]
    /// The chain over gpsd's TPV: position, course and speed over ground.
    public var fix: [OperatorSpec] = [.minMode(.twoD), .throttle(interval: 1, latest: true)]

    public init() {}
}

/// Ports the doors suggest, and who usually holds the ports around them, for the error when one is taken.
///
/// A Pi with Bearing often runs signalk-server (OpenPlotter) and gpsd too. signalk-server listens on TCP
/// 10110 (NMEA 0183, IANA's nmea-0183 port, also kplex's default) and 8375 (Signal K over TCP), so Bearing's
/// listeners go where the Signal K specification sends alternates ("an arbitrary high port in the range
/// 49152–65535", urls_ports.md), above Linux's ephemeral range (32768–60999) so that no outgoing connection's
/// local port takes them, keeping the mnemonic endings: 61110 and 61375. UDP outputs only send, so their
/// destinations keep the conventional 10110 (NMEA) and 8375 (Signal K).
public enum WellKnownPorts {
    public static let nmeaTCP = 61110
    public static let signalKTCP = 61375

    /// Who usually listens on `port` (nil: nobody we know of).
    public static func holder(_ port: Int) -> String? {
        switch port {
        case 10110: return "a Signal K server (signalk-server's NMEA 0183 output, on by default) or kplex: 10110 is IANA's nmea-0183 port"
        case 2947: return "gpsd"
        case 2948: return "Bearing's own gpsd-compatible TCP door (socket.tcp)"
        case 8375: return "signalk-server's Signal K TCP stream"
        case 3000: return "signalk-server's web server"
        case 2000: return "an NMEA-to-WiFi gateway's port, often forwarded here"
        case 20220: return "pypilot's NMEA server"
        case 23322: return "pypilot's own protocol"
        case 7691: return "imud"
        case nmeaTCP: return "another Bearing's NMEA 0183 door (Bearing's suggested port)"
        case signalKTCP: return "another Bearing's Signal K door (Bearing's suggested port)"
        default: return nil
        }
    }
}

/// A door's section: its outputs are read by the keys every door has (`outputKeys`).
public protocol DoorSection: Sendable {
    var outputs: DoorOutputs { get set }
}

extension DoorSection {
    /// The keys every door has: where it writes and how many readers it takes.
    static func outputKeys(tcp: Int, udp: Int) -> [ConfigKey<Self>] {
        let endpoints: @Sendable ([EchoGuard.Endpoint]) -> String = {
            $0.isEmpty ? "none" : $0.map { ConfigShow.code(TCPSocket.name($0.host, $0.port)) }.joined(separator: ", ")
        }
        return [
            .init("tcp", "`HOST:PORT` or a list, numeric", "TCP listeners (suggested `127.0.0.1:\(tcp)`); non-loopback only with `allow_remote`",
                  default: { endpoints($0.outputs.tcp) }) { r, node, path, c in c.outputs.tcp = try r.endpoints(node, path) },
            .init("udp", "`HOST:PORT` or a list, numeric; unicast or broadcast", "UDP destinations, one datagram per message (e.g. `127.0.0.1:\(udp)`)",
                  default: { endpoints($0.outputs.udp) }) { r, node, path, c in c.outputs.udp = try r.endpoints(node, path) },
            .bool("allow_remote", \.outputs.allowRemote, "allow non-loopback TCP listeners (no authentication: anyone who reaches the port reads)"),
            .int("max_clients", \.outputs.maxClients, 1...1024, "TCP readers at once, over all of this door's listeners"),
            .int("client_queue", \.outputs.clientQueue, 1...100_000,
                 "lines queued per TCP reader before its lines are dropped (a reader that stops reading never holds up the others)"),
        ]
    }
}

extension NMEA0183DoorConfig: DoorSection {
    /// The `nmea0183:` section.
    public static let keys: [ConfigKey<Self>] = outputKeys(tcp: WellKnownPorts.nmeaTCP, udp: 10110) + [
        .init("talker", "two letters A–Z", "the talker ID of every sentence (`HC`: a magnetic compass)", default: { ConfigShow.code($0.talker) }) {
            r, node, path, c in
            let t = try r.scalar(node, path).uppercased()
            guard NMEA0183Encoder.validTalker(t) else {
                throw r.fail(node, path, "\"\(t)\"", "two letters A–Z, e.g. HC (magnetic compass), HE (gyrocompass), II (integrated instruments)")
            }
            c.talker = t
        },
        .section("sentences", \.sentences, sentenceKeys,
                 "each sentence and the chain that sets its rate; sentences with equal chains go out together, from one instant"),
    ]

    /// One key per sentence type.
    static let sentenceKeys: [ConfigKey<[NMEA0183SentenceType: [OperatorSpec]]>] = NMEA0183SentenceType.allCases.map { type in
        .switchedChain(type.rawValue.lowercased(), \.[type], type == .rmc ? .tpv : .att, default: { defaultChain(type) }, type.summary)
    }
}

extension NMEA0183SentenceType {
    /// What the sentence carries.
    var summary: String {
        switch self {
        case .hdt: return "HDT: true heading (not sent without a declination)"
        case .hdm: return "HDM: magnetic heading"
        case .hdg: return "HDG: magnetic heading, and the WMM2025 variation"
        case .rot: return "ROT: rate of turn, degrees per minute, negative to port"
        case .xdr: return "XDR: pitch and roll (fused compass only)"
        case .rmc: return "RMC: gpsd's fix, with the WMM2025 magnetic variation"
        }
    }
}

extension SignalKDoorConfig: DoorSection {
    /// The `signalk:` section.
    public static let keys: [ConfigKey<Self>] = outputKeys(tcp: WellKnownPorts.signalKTCP, udp: 8375) + [
        .init("source", "letters, digits, `_`, `-`", "the `$source` label (`LABEL.compass`, `LABEL.gps`)", default: { ConfigShow.code($0.source) }) {
            r, node, path, c in
            let s = try r.scalar(node, path)
            guard ConfigReader.isName(s) else {
                throw r.fail(node, path, "\"\(s)\"", "a label of letters, digits, _ and - (the $source of every update), e.g. bearing")
            }
            c.source = s
        },
        .chain("attitude", \.attitude, .att, "heading, variation, attitude and rate of turn deltas"),
        .chain("fix", \.fix, .tpv, "position, course and speed over ground deltas"),
    ]
}

extension ConfigReader {
    /// One `HOST:PORT` or a list of them.
    public func endpoints(_ node: YAMLNode, _ key: String) throws -> [EchoGuard.Endpoint] {
        let items: [YAMLNode]
        if case .sequence(let list, _) = node { items = list } else if node.isNull { items = [] } else { items = [node] }
        return try items.compactMap { item in try hostPort(item, key).map { EchoGuard.Endpoint(host: $0.host, port: $0.port) } }
    }

    /// A door's TCP listeners are loopback only unless its section allows others.
    public func checkRemote(_ outputs: DoorOutputs, _ door: String, _ node: YAMLNode) throws {
        if !outputs.allowRemote, let remote = outputs.tcp.first(where: { !TCPSocket.isLoopback($0.host) }) {
            throw Self.remoteRefused(at: at(node), key: "\(door).tcp", address: TCPSocket.name(remote.host, remote.port), what: "the door",
                                     allowKey: "\(door).allow_remote")
        }
    }

    /// The rule for listeners without authentication (the TCP door, the marine doors): loopback only,
    /// unless the config allows others.
    public static func remoteRefused(at: String, key: String, address: String, what: String, allowKey: String) -> ConfigError {
        ConfigError("\(at): \(key): \(address) is not a loopback address; \(what) has no authentication, so a non-loopback address needs \(allowKey): true")
    }

}
