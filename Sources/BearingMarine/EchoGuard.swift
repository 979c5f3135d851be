import BearingModel
/// Recognises Bearing's own output coming back through gpsd. A gpsd told to read Bearing's NMEA door
/// (`gpsd tcp://127.0.0.1:61110`, or `udp://…` for its datagrams) decodes those sentences into ATT (and TPV
/// from RMC) with that door as the device; relaying them, or fusing them, would feed Bearing its own heading.
/// gpsd names the device as it was given on its command line, so a TCP device matches by port when its host
/// is this machine (loopback, `localhost`, the door's own address, or the door listening on any address),
/// and a UDP device by port alone (gpsd binds the port it is given, on any address).
public struct EchoGuard: Equatable, Sendable {
    public struct Endpoint: Equatable, Sendable {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    public var tcp: [Endpoint]
    public var udp: [Endpoint]

    public init(tcp: [Endpoint] = [], udp: [Endpoint] = []) {
        self.tcp = tcp
        self.udp = udp
    }

    public static let none = EchoGuard()

    public var isEmpty: Bool { tcp.isEmpty && udp.isEmpty }

    /// Whether a gpsd device path (`tcp://HOST:PORT`, `udp://HOST:PORT`) is one of the doors.
    public func isEcho(device: String?) -> Bool {
        guard !isEmpty, let device else { return false }
        let isTCP = device.hasPrefix("tcp://"), isUDP = device.hasPrefix("udp://")
        guard isTCP || isUDP else { return false }
        let rest = device.dropFirst(6)
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else { return false }
        var host = String(rest[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if isUDP { return udp.contains { $0.port == port } }
        return tcp.contains { door in
            door.port == port && (Self.isLocal(host) || host == door.host || door.host == "0.0.0.0" || door.host == "::")
        }
    }

    static func isLocal(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
