/// Why a source is not delivering data.
public enum DisconnectReason: Equatable, Sendable, CustomStringConvertible {
    /// Could not open the connection (nothing listening, host unknown, …).
    case openFailed(String)
    /// The server closed the connection.
    case closedByPeer
    /// No data for longer than the silence timeout: the link is treated as lost.
    case silence(seconds: Double)
    /// A read or protocol error.
    case error(String)
    /// The agent is shutting down.
    case stopped

    public var description: String {
        switch self {
        case .openFailed(let m): return "open failed: \(m)"
        case .closedByPeer: return "closed by gpsd"
        case .silence(let s): return "no data for \(Self.trim(s)) s"
        case .error(let m): return "error: \(m)"
        case .stopped: return "stopped"
        }
    }

    /// A short machine-readable tag, used as `reason` in `STATE` objects.
    public var code: String {
        switch self {
        case .openFailed: return "open-failed"
        case .closedByPeer: return "closed"
        case .silence: return "silence"
        case .error: return "error"
        case .stopped: return "stopped"
        }
    }

    static func trim(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(v)
    }
}

/// The state of the link to a data source such as gpsd.
public enum ConnectionState: Equatable, Sendable, CustomStringConvertible {
    case connecting(attempt: Int)
    case connected
    case disconnected(DisconnectReason)

    public var name: String {
        switch self {
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .disconnected: return "disconnected"
        }
    }

    public var description: String {
        switch self {
        case .connecting(let n): return "connecting (attempt \(n))"
        case .connected: return "connected"
        case .disconnected(let r): return "disconnected: \(r)"
        }
    }
}

/// A state change of one named source, with the endpoint it concerns (e.g. `127.0.0.1:2947`).
public struct SourceState: Equatable, Sendable {
    public var source: String
    public var endpoint: String
    public var state: ConnectionState
    public var time: GPSTimestamp

    public init(source: String, endpoint: String, state: ConnectionState, time: GPSTimestamp) {
        self.source = source
        self.endpoint = endpoint
        self.state = state
        self.time = time
    }
}
