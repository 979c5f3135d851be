import FoundationEssentials

/// The `socket:` section: the UNIX socket, the loopback TCP door, and their bounds.
public struct SocketSettings: Equatable, Sendable {
    public var path: String = SocketSettings.defaultPath()
    public var mode: UInt32 = 0o660
    /// The socket file's group (e.g. `bearing`); nil leaves the daemon's own group.
    public var group: String? = nil
    /// Connections at once, over the UNIX socket and the TCP door together. 32: a Pi runs a handful
    /// of readers; each costs at most `clientQueue` queued lines (≈ 150 KB at 256 × 600 bytes), so 32
    /// bound the worst case near 5 MB on a 512 MB Zero 2 W. Raise it for a fleet of readers.
    public var maxClients: Int = 32
    /// Messages queued per client before messages for that client are dropped.
    public var clientQueue: Int = 256
    /// Least time between two writes to one client (seconds); lines that come sooner share the next
    /// write. 0 writes each line at once: lowest latency, one `send(2)` per line per reader.
    public var writeInterval: Double = 0
    /// The loopback TCP door for unmodified gpsd clients (`HOST:PORT`); nil for none.
    public var tcp: (host: String, port: Int)? = nil
    /// Allow a TCP door on an address other than loopback.
    public var tcpAllowRemote = false
    /// Users (uids or names) that may define named pipelines at run time, besides root.
    public var pipelineWriters: [String] = []
    /// Longest request line accepted.
    public var maxRequestBytes = 8192

    public init() {}

    public static func == (a: SocketSettings, b: SocketSettings) -> Bool {
        a.path == b.path && a.mode == b.mode && a.group == b.group && a.maxClients == b.maxClients && a.clientQueue == b.clientQueue
            && a.writeInterval == b.writeInterval
            && a.tcp?.host == b.tcp?.host && a.tcp?.port == b.tcp?.port && a.tcpAllowRemote == b.tcpAllowRemote
            && a.pipelineWriters == b.pipelineWriters && a.maxRequestBytes == b.maxRequestBytes
    }

    /// `$RUNTIME_DIRECTORY/bearing.sock` under systemd, else `/run/bearing/bearing.sock`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let dir = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !dir.isEmpty {
            return "\(dir)/bearing.sock"
        }
        return "/run/bearing/bearing.sock"
    }
}
