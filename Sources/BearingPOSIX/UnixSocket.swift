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

    static func address(_ path: String) -> sockaddr_un? {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return addr
    }

    private static func withAddress<R>(_ addr: inout sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Connects to the socket at `path`; returns a blocking descriptor.
    public static func connect(path: String) throws(SystemError) -> Int32 {
        guard var addr = address(path) else { throw SystemError("connect", path, errno: ENAMETOOLONG) }
        let fd = try Syscall.check("socket", path) { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
        let r = withAddress(&addr) { Glibc.connect(fd, $0, $1) }
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
        guard var addr = address(path) else { throw .pathTooLong(path) }
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
            try Syscall.check("bind", path) { withAddress(&addr) { bind(fd, $0, $1) } }
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
