#if canImport(Glibc)
import Glibc
#endif

/// TCP stream sockets for the gpsd-compatible door and for clients: numeric addresses only (no DNS).
public enum TCPSocket {
    /// A numeric IPv4/IPv6 address and port as a socket address.
    static func resolve(_ host: String, _ port: Int) throws(SystemError) -> (family: Int32, storage: sockaddr_storage, length: socklen_t) {
        let family = host.contains(":") ? AF_INET6 : AF_INET
        var storage = sockaddr_storage()
        let parsed = withUnsafeMutableBytes(of: &storage) { raw -> Bool in
            if family == AF_INET6 {
                var a = sockaddr_in6()
                a.sin6_family = sa_family_t(AF_INET6)
                a.sin6_port = in_port_t(UInt16(port).bigEndian)
                defer { withUnsafeBytes(of: a) { raw.copyMemory(from: $0) } }
                return inet_pton(AF_INET6, host, &a.sin6_addr) == 1
            }
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(port).bigEndian)
            defer { withUnsafeBytes(of: a) { raw.copyMemory(from: $0) } }
            return inet_pton(AF_INET, host, &a.sin_addr) == 1
        }
        guard parsed else { throw SystemError("inet_pton", host, errno: EINVAL) }
        return (family, storage, socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size))
    }

    /// `host:port`, with brackets around an IPv6 address.
    public static func name(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Whether `host` is a numeric IPv4 or IPv6 address.
    public static func isNumeric(_ host: String) -> Bool {
        var a = in6_addr()
        return inet_pton(AF_INET, host, &a) == 1 || inet_pton(AF_INET6, host, &a) == 1
    }

    /// Whether `host` is a loopback address (127.0.0.0/8 or ::1).
    public static func isLoopback(_ host: String) -> Bool {
        if host == "::1" { return true }
        var a = in_addr()
        guard inet_pton(AF_INET, host, &a) == 1 else { return false }
        return UInt32(bigEndian: a.s_addr) >> 24 == 127
    }

    /// A non-blocking listening socket on `host:port` (SO_REUSEADDR, so a restart does not wait out TIME_WAIT).
    public static func listen(host: String, port: Int, backlog: Int32 = 64) throws(SystemError) -> Int32 {
        let subject = name(host, port)
        var (family, storage, length) = try resolve(host, port)
        let fd = try Syscall.check("socket", subject) { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        do {
            var one: Int32 = 1
            try Syscall.check("setsockopt(SO_REUSEADDR)", subject) { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
            try Syscall.check("bind", subject) {
                withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            }
            try Syscall.check("listen", subject) { Glibc.listen(fd, backlog) }
            try Syscall.setNonBlocking(fd)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Connects to `host:port`; returns a blocking descriptor.
    public static func connect(host: String, port: Int) throws(SystemError) -> Int32 {
        let subject = name(host, port)
        var (family, storage, length) = try resolve(host, port)
        let fd = try Syscall.check("socket", subject) { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let r = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) } }
        if r != 0 {
            let e = SystemError("connect", subject)
            close(fd)
            throw e
        }
        return fd
    }

    /// The port a listening socket got (for port 0).
    public static func boundPort(_ fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let r = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        guard r == 0 else { return nil }
        return withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, right after the family.
            Int(UInt16(bigEndian: raw.load(fromByteOffset: 2, as: UInt16.self)))
        }
    }
}

/// `HOST:PORT` or `[V6HOST]:PORT`.
public enum HostPort {
    public static func parse(_ text: String) -> (host: String, port: Int)? {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }
}
