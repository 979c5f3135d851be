import CBearingSys
#if canImport(Glibc)
import Glibc
#endif

/// Listening sockets handed over by systemd (`sd_listen_fds(3)`'s protocol): descriptors 3… with
/// `$LISTEN_FDS` counting them, `$LISTEN_PID` naming the process they are for and `$LISTEN_FDNAMES` their
/// names. Each is identified by its own address (`getsockname`), so the unit's order does not matter.
public enum SocketActivation {
    /// One inherited listener.
    public struct Inherited: Sendable, Equatable {
        public enum Address: Sendable, Equatable {
            case unix(path: String)
            case tcp(host: String, port: Int)
        }
        public var fd: Int32
        public var name: String
        public var address: Address
    }

    public static let firstDescriptor: Int32 = 3

    /// The listeners systemd passed to this process, made non-blocking and close-on-exec; empty when none
    /// were (no `$LISTEN_FDS`, or they are for another process). Clears the variables, as
    /// `sd_listen_fds(1)` does, so a child does not take them for its own. Throws, naming the descriptor,
    /// when one is not a listening stream socket of a family Bearing serves.
    public static func inheritedListeners(_ environment: (String) -> String? = { getenv($0).map { String(cString: $0) } },
                                          clear: Bool = true) throws(SystemError) -> [Inherited] {
        defer {
            if clear { for v in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(v) } }
        }
        guard let pid = environment("LISTEN_PID").flatMap(Int32.init), pid == getpid(),
              let count = environment("LISTEN_FDS").flatMap(Int32.init), count > 0 else { return [] }
        let names = environment("LISTEN_FDNAMES")?.split(separator: ":", omittingEmptySubsequences: false).map(String.init) ?? []
        var out: [Inherited] = []
        for i in 0..<count {
            let fd = firstDescriptor + i
            let subject = "inherited fd \(fd)"
            let flags = try Syscall.check("fcntl(F_GETFD)", subject) { fcntl(fd, F_GETFD) }
            try Syscall.check("fcntl(F_SETFD)", subject) { fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
            try Syscall.setNonBlocking(fd)
            var listening: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            try Syscall.check("getsockopt(SO_ACCEPTCONN)", subject) { getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) }
            guard listening != 0 else { throw SystemError("a listening socket", subject, errno: EINVAL) }
            out.append(Inherited(fd: fd, name: Int(i) < names.count ? names[Int(i)] : "unknown", address: try address(of: fd, subject)))
        }
        return out
    }

    static func address(of fd: Int32, _ subject: String) throws(SystemError) -> Inherited.Address {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        try Syscall.check("getsockname", subject) {
            withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        }
        switch Int32(storage.ss_family) {
        case AF_UNIX:
            let path = withUnsafeBytes(of: storage) { raw -> String in
                let bytes = raw[MemoryLayout<sa_family_t>.size..<Int(len)]
                return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            return .unix(path: path)
        case AF_INET, AF_INET6:
            guard let port = TCPSocket.boundPort(fd) else { throw SystemError("getsockname", subject) }
            var host = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            withUnsafeBytes(of: storage) { raw in
                if Int32(storage.ss_family) == AF_INET {
                    var a = raw.load(fromByteOffset: 0, as: sockaddr_in.self).sin_addr
                    _ = inet_ntop(AF_INET, &a, &host, socklen_t(host.count))
                } else {
                    var a = raw.load(fromByteOffset: 0, as: sockaddr_in6.self).sin6_addr
                    _ = inet_ntop(AF_INET6, &a, &host, socklen_t(host.count))
                }
            }
            return .tcp(host: String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port: port)
        default:
            throw SystemError("a UNIX or TCP socket", subject, errno: EAFNOSUPPORT)
        }
    }
}
