import BearingModel
import BearingWire
import BearingPOSIX
#if canImport(Glibc)
import Glibc
#endif

/// A client of a Bearing agent (or of gpsd itself): connect over the UNIX socket or the TCP door, send
/// requests (WATCH with options, POLL, PIPELINE, …) and read typed messages. `watch(_:backoff:handler:)`
/// keeps a subscription alive across agent restarts.
///
/// ```swift
/// let client = BearingClient(.unix("/run/bearing/bearing.sock"))
/// try client.connect()
/// try client.send(.watch(WatchChange(enable: true, json: true, pipelines: [.tpv: [.throttle(interval: 5, latest: true)]])))
/// while let m = try client.next(timeout: 10) { if let fix = m.fix { print(fix) } }
/// ```
public final class BearingClient {
    public enum Endpoint: Equatable, Sendable, CustomStringConvertible {
        case unix(String)
        case tcp(host: String, port: Int)

        public var description: String {
            switch self {
            case .unix(let path): return path
            case .tcp(let host, let port): return TCPSocket.name(host, port)
            }
        }
    }

    public let endpoint: Endpoint
    private var fd: Int32 = -1
    private var lines: LineReader?

    public init(_ endpoint: Endpoint) { self.endpoint = endpoint }
    deinit { disconnect() }

    public var isConnected: Bool { fd >= 0 }

    /// Connects (closing any previous connection).
    public func connect() throws(BearingClientError) {
        disconnect()
        Syscall.ignoreSIGPIPE()
        do {
            switch endpoint {
            case .unix(let path): fd = try UnixSocket.connect(path: path)
            case .tcp(let host, let port): fd = try TCPSocket.connect(host: host, port: port)
            }
        } catch {
            throw .connect(endpoint, error)
        }
        lines = LineReader(fd: fd, subject: endpoint.description)
    }

    /// Closes the connection; a thread blocked in `next()` wakes up (shutdown, then close).
    public func disconnect() {
        if fd >= 0 {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
        fd = -1
        lines = nil
    }

    /// Sends one request.
    public func send(_ request: ClientRequest) throws(BearingClientError) {
        guard fd >= 0 else { throw .notConnected(endpoint) }
        let bytes = Array(request.line.utf8)
        let result: Result<Void, SystemError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try Syscall.writeAll(fd, buffer, endpoint.description) }
        }
        if case .failure(let error) = result { throw .io(endpoint, error) }
    }

    /// The next message; nil when `timeout` (seconds) passes first. A line that is not a gpsd object is
    /// skipped. Throws when the agent closes the connection.
    public func next(timeout: Double? = nil) throws(BearingClientError) -> WireMessage? {
        guard var reader = lines else { throw .notConnected(endpoint) }
        defer { lines = reader }
        let deadline = timeout.map { Syscall.monotonicSeconds() + $0 }
        while true {
            let event: LineReader.Event
            do { event = try reader.next(deadline: deadline) } catch { throw .io(endpoint, error) }
            switch event {
            case .timeout: return nil
            case .end: throw .closed(endpoint)
            case .line(let bytes):
                if let m = try? WireMessage(line: String(decoding: bytes, as: UTF8.self)) { return m }
            }
        }
    }

    /// Sends `request` and returns the first reply of class `className` (or an ERROR as a thrown error).
    public func request(_ request: ClientRequest, expecting className: String, timeout: Double = 5) throws(BearingClientError) -> WireMessage {
        try send(request)
        let deadline = Syscall.monotonicSeconds() + timeout
        while true {
            guard let m = try next(timeout: max(0, deadline - Syscall.monotonicSeconds())) else { throw .timeout(endpoint, className) }
            if m.className == className { return m }
            if let message = m.errorMessage { throw .refused(endpoint, message) }
        }
    }

    /// Watches with `change` until `handler` returns false, reconnecting with `backoff` whenever the
    /// agent is away or closes the connection; `onReconnect` hears each failure and the delay before the
    /// next attempt.
    public func watch(_ change: WatchChange, backoff: Backoff = Backoff(initial: 0.5, maximum: 10),
                      onReconnect: (BearingClientError, Double) -> Void = { _, _ in },
                      handler: (WireMessage) -> Bool) {
        var backoff = backoff
        while true {
            do throws(BearingClientError) {
                try connect()
                try send(.watch(change))
                while true {
                    guard let m = try next(timeout: 3600) else { continue }
                    backoff.reset()
                    if !handler(m) { disconnect(); return }
                }
            } catch {
                disconnect()
                let delay = backoff.delay()
                onReconnect(error, delay)
                var ts = timespec(tv_sec: Int(delay), tv_nsec: Int((delay - delay.rounded(.down)) * 1e9))
                var left = timespec()
                while nanosleep(&ts, &left) != 0 && errno == EINTR { ts = left }
            }
        }
    }
}

/// What went wrong talking to the agent, with the endpoint.
public enum BearingClientError: Error, CustomStringConvertible {
    case connect(BearingClient.Endpoint, SystemError)
    case io(BearingClient.Endpoint, SystemError)
    case closed(BearingClient.Endpoint)
    case notConnected(BearingClient.Endpoint)
    case timeout(BearingClient.Endpoint, String)
    case refused(BearingClient.Endpoint, String)

    public var description: String {
        switch self {
        case .connect(let ep, let e):
            switch (ep, e.errno) {
            case (.unix(let path), ENOENT): return "no socket at \(path): is bearing running? (systemctl status bearing)"
            case (.unix(let path), ECONNREFUSED): return "nothing is listening at \(path): bearing is not running (the socket file is stale)"
            case (.unix(let path), EACCES), (.unix(let path), EPERM): return "permission denied for \(path): add your user to the socket's group (docs/install.md)"
            case (.tcp, ECONNREFUSED): return "nothing is listening at \(ep): is bearing running with its TCP door (socket.tcp / --tcp)?"
            default: return "cannot connect to \(ep): \(e.message)"
            }
        case .io(let ep, let e): return "\(ep): \(e.message)"
        case .closed(let ep): return "bearing closed the connection at \(ep)"
        case .notConnected(let ep): return "not connected to \(ep)"
        case .timeout(let ep, let c): return "no \(c) from \(ep) in time"
        case .refused(let ep, let m): return "\(ep) replied: \(m)"
        }
    }
}
