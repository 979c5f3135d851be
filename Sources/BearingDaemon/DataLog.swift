import BearingPOSIX
import BearingLog
import Dispatch
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An append-only NDJSON file: every published object as one line, each written by a single
/// `write(2)` to an `O_APPEND` descriptor so a line is never interleaved or split by another writer.
/// Writes happen on a queue of their own, so a slow disk never holds up the pipeline.
/// `reopen()` (on SIGHUP) starts a new file after log rotation.
public final class DataLog: Sendable {
    public let path: String
    private let queue = DispatchQueue(label: "bearing.datalog")
    private let logger: Logger
    /// The descriptor (-1 once closed) and whether the last write failed; touched only on `queue`, so the
    /// lock is never contended.
    private let file: Mutex<(fd: Int32, failing: Bool)>

    public init(path: String, logger: Logger) throws(SystemError) {
        self.path = path
        self.logger = logger
        let fd = try Self.open(path)
        file = Mutex((fd, false))
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
            file.withLock { f in
                guard f.fd >= 0 else { return }
                var record = line
                record += "\n"
                let ok = record.withUTF8 { buf -> Bool in
                    let n = write(f.fd, buf.baseAddress, buf.count)
                    if n == buf.count { return true }
                    let e = n < 0 ? errno : ENOSPC
                    if !f.failing { logger.error("data log write failed", metadata: ["path": "\(path)", "error": "\(SystemError("write", path, errno: e))"]) }
                    return false
                }
                if ok && f.failing { logger.notice("data log writes resumed", metadata: ["path": "\(path)"]) }
                f.failing = !ok
            }
        }
    }

    public func reopen() {
        queue.async { [self] in
            do {
                let newFD = try Self.open(path)
                file.withLock { f in
                    if f.fd >= 0 { Glibc.close(f.fd) }
                    f.fd = newFD
                }
                logger.info("data log reopened", metadata: ["path": "\(path)"])
            } catch {
                logger.error("data log reopen failed; keeping the old file", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Writes what is queued and closes the file.
    public func close() {
        queue.sync {
            file.withLock { f in
                if f.fd >= 0 { fsync(f.fd); Glibc.close(f.fd); f.fd = -1 }
            }
        }
    }

    /// Waits until every line appended so far is written.
    public func flush() { queue.sync {} }
}
