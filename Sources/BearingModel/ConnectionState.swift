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
    /// `retryIn`: seconds until the next attempt (nil when none follows: stopped).
    case disconnected(DisconnectReason, retryIn: Double?)

    /// Stopped for good: the last state of every source.
    public static let stopped = ConnectionState.disconnected(.stopped, retryIn: nil)

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
        case .disconnected(let r, _): return "disconnected: \(r)"
        }
    }
}

/// A state change of one named source, with the endpoint it concerns (e.g. `127.0.0.1:2947`).
public struct SourceState: Equatable, Sendable {
    public var source: String
    public var endpoint: String
    public var state: ConnectionState
    public var time: GPSTimestamp
    /// When disconnected: the attempts that failed since the source was last connected.
    public var failedAttempts: Int?

    public init(source: String, endpoint: String, state: ConnectionState, time: GPSTimestamp, failedAttempts: Int? = nil) {
        self.source = source
        self.endpoint = endpoint
        self.state = state
        self.time = time
        self.failedAttempts = failedAttempts
    }
}

/// Which of a source's state changes readers hear. A source that cannot be reached retries (connecting,
/// disconnected, connecting, …): every retry updates the STATE kept for replay, but only transitions are
/// sent — the first `connecting`, `connected`, a disconnection, a disconnection for another reason — so a
/// client that takes N lines is not filled with retries.
public struct SourceStateTransitions: Sendable {
    private var attempt = 0
    private var lastSent: (name: String, reason: String?)?

    public init() {}

    /// The STATE for `state`, with the failed attempts so far, and whether it is a transition.
    public mutating func next(_ state: ConnectionState, source: String, endpoint: String, time: GPSTimestamp) -> (state: SourceState, isTransition: Bool) {
        var s = SourceState(source: source, endpoint: endpoint, state: state, time: time)
        let isTransition: Bool
        switch state {
        case .connecting(let n):
            attempt = n
            isTransition = lastSent == nil
        case .connected:
            attempt = 0
            isTransition = lastSent?.name != "connected"
        case .disconnected(let reason, _):
            s.failedAttempts = attempt
            isTransition = lastSent?.name != "disconnected" || lastSent?.reason != reason.code
        }
        if isTransition {
            if case .disconnected(let reason, _) = state { lastSent = (state.name, reason.code) } else { lastSent = (state.name, nil) }
        }
        return (s, isTransition)
    }
}
