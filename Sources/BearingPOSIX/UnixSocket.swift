#if canImport(Glibc)
import Glibc
#endif

/// AF_UNIX stream sockets: a listener that refuses to take over a live socket, and a client connect.
public enum UnixSocket {
    public enum ListenError: Error, CustomStringConvertible {
        case pathTooLong(String)
        case inUse(String)
        case notASocket(String)
        case system(SystemError)

        public var description: String {
            switch self {
            case .pathTooLong(let p): return "socket path is too long (max 107 bytes): \(p)"
            case .inUse(let p): return "another process is already listening on \(p); refusing to take it over (is another bearing running?)"
            case .notASocket(let p): return "\(p) exists and is not a socket; refusing to replace it"
            case .system(let e): return e.description
            }
        }
    }

    /// An AF_UNIX socket address: a file path, or, with a leading `@`, a name in Linux's abstract namespace
    /// (as systemd writes `$NOTIFY_SOCKET`).
    public struct Address: Sendable {
        private var storage = sockaddr_un()
        /// The length to pass with it: the family and the name (a path with its NUL; an abstract name without).
        public let length: socklen_t

        /// Nil when `name` is empty or longer than `sun_path` holds.
        public init?(_ name: String) {
            var bytes = Array(name.utf8)
            guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: storage.sun_path) else { return nil }
            let abstract = bytes[0] == UInt8(ascii: "@")
            if abstract { bytes[0] = 0 } else { bytes.append(0) }
            storage.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
            length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        }

        public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
        }
    }

    /// Connects to the socket at `path`; returns a blocking descriptor.
    public static func connect(path: String) throws(SystemError) -> Int32 {
        guard let addr = Address(path) else { throw SystemError("connect", path, errno: ENAMETOOLONG) }
        let fd = try Syscall.check("socket", path) { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let r = addr.withSockaddr { Glibc.connect(fd, $0, $1) }
        if r != 0 {
            let e = SystemError("connect", path)
            close(fd)
            throw e
        }
        return fd
    }

    /// Creates a listening socket at `path` with file mode `mode`.
    ///
    /// A socket file left by a crashed instance (connect is refused) is removed and replaced; a socket
    /// that someone accepts on is never taken over, and a non-socket file is never removed.
    public static func listen(path: String, mode: mode_t, backlog: Int32 = 64) throws(ListenError) -> Int32 {
        guard let addr = Address(path) else { throw .pathTooLong(path) }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else { throw .notASocket(path) }
            if let probe = try? connect(path: path) {
                close(probe)
                throw .inUse(path)
            }
            if unlink(path) != 0 && errno != ENOENT { throw .system(SystemError("unlink", path)) }
        }
        let fd: Int32
        do {
            fd = try Syscall.check("socket", path) { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        } catch { throw .system(error) }
        do {
            try Syscall.check("bind", path) { addr.withSockaddr { bind(fd, $0, $1) } }
            try Syscall.check("chmod", path) { chmod(path, mode) }
            try Syscall.check("listen", path) { Glibc.listen(fd, backlog) }
            try Syscall.setNonBlocking(fd)
        } catch {
            close(fd)
            throw .system(error)
        }
        return fd
    }

    /// Creates the socket's directory (one level) if it is missing.
    public static func ensureParentDirectory(of path: String, mode: mode_t = 0o755) throws(SystemError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let dir = String(path[..<slash])
        var st = stat()
        if stat(dir, &st) == 0 { return }
        if mkdir(dir, mode) != 0 && errno != EEXIST { throw SystemError("mkdir", dir) }
    }
}
