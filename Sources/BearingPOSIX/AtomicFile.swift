#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and atomic replacement: a file is either the old one or the new one, never a mix,
/// even when the process or the power dies mid-write.
public enum AtomicFile {
    /// Moves the file at `path` to `destination` (replacing any file there), atomically: it is at one name or
    /// the other, never lost.
    public static func move(_ path: String, to destination: String) throws(SystemError) {
        _ = try Syscall.check("rename", "\(path) → \(destination)") { rename(path, destination) }
    }

    /// Writes `bytes` to a temporary file beside `path`, fsyncs it, renames it over `path` and fsyncs
    /// the directory. Creates missing parent directories (0755).
    ///
    /// Fault injection: with `BEARING_FAULT=atomic-write-crash` in the environment the process kills
    /// itself (SIGKILL) after writing half the temporary file — the crash the design must survive.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(SystemError) {
        let directory = parent(of: path)
        try makeDirectories(directory)
        let temporary = "\(path).tmp.\(getpid())"
        let fd = try Syscall.check("open", temporary) { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
        do throws(SystemError) {
            let crash = getenv("BEARING_FAULT").map { String(cString: $0) } == "atomic-write-crash"
            let failure = bytes.withUnsafeBytes { buffer -> SystemError? in
                do throws(SystemError) {
                    if crash {
                        let half = UnsafeRawBufferPointer(rebasing: buffer[0..<(buffer.count / 2)])
                        try Syscall.writeAll(fd, half, temporary)
                        fsync(fd)
                        kill(getpid(), SIGKILL)
                    }
                    try Syscall.writeAll(fd, buffer, temporary)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
            try Syscall.check("fchmod", temporary) { fchmod(fd, mode) }
            try Syscall.check("fsync", temporary) { fsync(fd) }
            try Syscall.check("close", temporary) { close(fd) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        do throws(SystemError) {
            try Syscall.check("rename", "\(temporary) → \(path)") { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        // The rename is durable once the directory entry is on disk.
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            fsync(dfd)
            close(dfd)
        }
    }

    /// The whole file, refusing files larger than `limit` bytes.
    public static func read(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> [UInt8] {
        let fd = try Syscall.check("open", path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = try Syscall.check("read", path) { chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > limit { throw SystemError("read", "\(path): larger than \(limit) bytes", errno: EFBIG) }
        }
        return bytes
    }

    /// The size limit for sample recordings read whole (an hour of a 100 Hz IMU is about 25 MB).
    public static let recordingLimit = 1 << 30

    /// The whole file as UTF-8 text, refusing files larger than `limit` bytes or not UTF-8 (EILSEQ).
    public static func readText(_ path: String, limit: Int = 1 << 20) throws(SystemError) -> String {
        let bytes = try read(path, limit: limit)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SystemError("read", "\(path): not UTF-8 text", errno: EILSEQ)
        }
        return text
    }

    /// `path` without its last component ("." when it has no slash).
    public static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String, mode: mode_t = 0o755) throws(SystemError) {
        if path.isEmpty || path == "/" || path == "." { return }
        var st = stat()
        if stat(path, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { return }
            throw SystemError("mkdir", path, errno: ENOTDIR)
        }
        try makeDirectories(parent(of: path), mode: mode)
        if mkdir(path, mode) != 0 && errno != EEXIST { throw SystemError("mkdir", path) }
    }
}
