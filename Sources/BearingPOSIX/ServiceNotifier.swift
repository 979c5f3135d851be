import Synchronization
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// systemd's service notification protocol (`sd_notify(3)`), spoken directly: newline-separated
/// `KEY=value` assignments in one datagram to the AF_UNIX socket named by `$NOTIFY_SOCKET`, where a leading
/// `@` means the abstract namespace. Direct rather than through libsystemd: the protocol is small,
/// documented as stable ("Notes" in sd_notify(3)), and speaking it ourselves keeps libsystemd and its
/// dependencies out of the daemon and needs no C shim. Outside systemd (`$NOTIFY_SOCKET` unset) there is no
/// notifier and nothing is sent.
public final class ServiceNotifier: Sendable { // immutable after init but for `stoppingSent`; sendto(2) is thread-safe
    /// What `$NOTIFY_SOCKET` named.
    public let socketName: String
    /// How often systemd expects `WATCHDOG=1` (from `$WATCHDOG_USEC`, when `$WATCHDOG_PID` is unset or ours).
    public let watchdogInterval: Double?

    private let fd: Int32
    private let address: UnixSocket.Address
    private let stoppingSent = Mutex(false)

    /// A notifier for the socket `$NOTIFY_SOCKET` names; nil when it is unset or empty. Throws when it names
    /// something that is not an AF_UNIX socket path (`/…`) or abstract name (`@…`), or is too long.
    public static func fromEnvironment(_ environment: (String) -> String? = { getenv($0).map { String(cString: $0) } })
        throws(SystemError) -> ServiceNotifier? {
        guard let name = environment("NOTIFY_SOCKET"), !name.isEmpty else { return nil }
        var watchdog: Double?
        if let usec = environment("WATCHDOG_USEC").flatMap(UInt64.init), usec > 0,
           environment("WATCHDOG_PID").flatMap(Int32.init).map({ $0 == getpid() }) ?? true {
            watchdog = Double(usec) / 1e6
        }
        return try ServiceNotifier(socketName: name, watchdogInterval: watchdog)
    }

    public init(socketName: String, watchdogInterval: Double? = nil) throws(SystemError) {
        guard socketName.hasPrefix("/") || socketName.hasPrefix("@") else {
            throw SystemError("NOTIFY_SOCKET", socketName, errno: EAFNOSUPPORT)
        }
        guard let address = UnixSocket.Address(socketName) else { throw SystemError("NOTIFY_SOCKET", socketName, errno: ENAMETOOLONG) }
        self.address = address
        self.socketName = socketName
        self.watchdogInterval = watchdogInterval
        fd = try Syscall.check("socket(AF_UNIX, SOCK_DGRAM)", socketName) {
            socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
    }

    deinit { close(fd) }

    /// Sends `assignments` in one datagram, in order.
    public func notify(_ assignments: [(key: String, value: String)]) throws(SystemError) {
        // A value is one line: systemd reads the datagram line by line.
        let text = assignments.map { "\($0.key)=\($0.value.split(whereSeparator: \.isNewline).joined(separator: " "))" }.joined(separator: "\n")
        let bytes = Array(text.utf8)
        try Syscall.check("sendto", socketName) {
            bytes.withUnsafeBytes { raw in
                address.withSockaddr { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), $0, $1) }
            }
        }
    }

    /// Start-up is complete (READY=1), with a STATUS line for `systemctl status`.
    public func ready(status: String) throws(SystemError) {
        try notify([("READY", "1"), ("STATUS", status)])
    }

    public func status(_ status: String) throws(SystemError) {
        try notify([("STATUS", status)])
    }

    /// A reload begins (RELOADING=1, with the CLOCK_MONOTONIC time systemd ≥ 253 asks for); send `ready`
    /// when it is done.
    public func reloading(status: String) throws(SystemError) {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let usec = UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
        try notify([("RELOADING", "1"), ("MONOTONIC_USEC", "\(usec)"), ("STATUS", status)])
    }

    /// Shutdown begins (STOPPING=1); only the first call sends.
    public func stopping(status: String) throws(SystemError) {
        let first = stoppingSent.withLock { sent -> Bool in
            defer { sent = true }
            return !sent
        }
        if first { try notify([("STOPPING", "1"), ("STATUS", status)]) }
    }

    /// Feeds the watchdog (WATCHDOG=1).
    public func watchdog() throws(SystemError) {
        try notify([("WATCHDOG", "1")])
    }
}
