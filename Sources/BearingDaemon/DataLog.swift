import BearingPOSIX
import BearingLog
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An append-only NDJSON file: every published object as one line, each written by a single
/// `write(2)` to an `O_APPEND` descriptor so a line is never interleaved or split by another writer.
/// Writes happen on a queue of their own, so a slow disk never holds up the pipeline.
/// `reopen()` (on SIGHUP) starts a new file after log rotation.
public final class DataLog: @unchecked Sendable { // `fd` and `failing` are touched only on `queue`
    public let path: String
    private let queue = DispatchQueue(label: "bearing.datalog")
    private var fd: Int32 = -1
    private let logger: Logger
    private var failing = false

    public init(path: String, logger: Logger) throws(SystemError) {
        self.path = path
        self.logger = logger
        fd = try Self.open(path)
    }

    /// Opens for appending; a file whose last line was cut short (a crash mid-write of an older
    /// writer) gets a newline first so the next record starts on a line of its own.
    static func open(_ path: String) throws(SystemError) -> Int32 {
        let fd = try Syscall.check("open", path) { Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o640) }
        var st = stat()
        if fstat(fd, &st) == 0, st.st_size > 0 {
            let rfd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            if rfd >= 0 {
                var last: UInt8 = 0
                if pread(rfd, &last, 1, st.st_size - 1) == 1, last != UInt8(ascii: "\n") {
                    _ = write(fd, "\n", 1)
                }
                Glibc.close(rfd)
            }
        }
        return fd
    }

    public func append(_ line: String) {
        queue.async { [self] in
            guard fd >= 0 else { return }
            var record = line
            record += "\n"
            let ok = record.withUTF8 { buf -> Bool in
                let n = write(fd, buf.baseAddress, buf.count)
                if n == buf.count { return true }
                let e = n < 0 ? errno : ENOSPC
                if !failing { logger.error("data log write failed", metadata: ["path": "\(path)", "error": "\(SystemError("write", path, errno: e))"]) }
                return false
            }
            if ok && failing { logger.notice("data log writes resumed", metadata: ["path": "\(path)"]) }
            failing = !ok
        }
    }

    public func reopen() {
        queue.async { [self] in
            do {
                let newFD = try Self.open(path)
                if fd >= 0 { Glibc.close(fd) }
                fd = newFD
                logger.info("data log reopened", metadata: ["path": "\(path)"])
            } catch {
                logger.error("data log reopen failed; keeping the old file", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes what is queued and closes the file.
    public func close() {
        queue.sync {
            if fd >= 0 { fsync(fd); Glibc.close(fd); fd = -1 }
        }
    }

    /// Waits until every line appended so far is written.
    public func flush() { queue.sync {} }
}
