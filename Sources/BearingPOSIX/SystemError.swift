import BearingModel
import CBearingSys
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: the operation, what it acted on, and the errno it returned.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    public var operation: String
    public var subject: String?
    public var errno: Int32

    public init(_ operation: String, _ subject: String? = nil, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.subject = subject
        self.errno = errno
    }

    public var message: String { String(cString: strerror(errno)) }

    public var description: String {
        let target = subject.map { "(\($0))" } ?? ""
        return "\(operation)\(target): \(message) (errno \(errno))"
    }
}

/// Thin wrappers: every syscall the project makes goes through one of these, retried on EINTR and
/// turned into a `SystemError` that names the operation.
public enum Syscall {
    /// Runs `call` until it is not interrupted; a negative result becomes a `SystemError` naming `operation`.
    @discardableResult
    public static func check<Result: BinaryInteger>(_ operation: String, _ subject: String? = nil, _ call: () -> Result) throws(SystemError) -> Result {
        while true {
            let r = call()
            if r >= 0 { return r }
            if errno == EINTR { continue }
            throw SystemError(operation, subject)
        }
    }

    public static func setNonBlocking(_ fd: Int32) throws(SystemError) {
        let flags = try check("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        try check("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Ignore SIGPIPE process-wide: a write to a socket whose reader has gone then fails with EPIPE.
    public static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Writes all of `bytes`, retrying short writes; for blocking descriptors.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, _ subject: String? = nil) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = try check("write", subject) { write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            offset += n
        }
    }

    /// Writes `text` to standard error, whole; best effort (a closed stderr loses it).
    public static func printToStandardError(_ text: String) {
        var text = text
        text.withUTF8 { try? writeAll(STDERR_FILENO, UnsafeRawBufferPointer($0), "stderr") }
    }

    /// Writes `bytes` to standard output, whole.
    public static func writeStandardOutput(_ bytes: [UInt8]) throws(SystemError) {
        let failure: SystemError? = bytes.withUnsafeBytes { b in
            do throws(SystemError) { try writeAll(STDOUT_FILENO, b, "stdout") } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec descriptor; nil when none is pending.
    public static func acceptNonBlocking(_ listenFD: Int32, _ subject: String) throws(SystemError) -> Int32? {
        while true {
            let fd = bearing_accept_nonblocking(listenFD)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
            throw SystemError("accept", subject)
        }
    }

    /// A non-blocking eventfd for waking a poll loop.
    public static func eventFD() throws(SystemError) -> Int32 {
        try check("eventfd") { bearing_eventfd() }
    }

    /// Stops the kernel from keeping code pages of this (large, static) executable resident that it never
    /// runs: read-ahead and fault-around map up to 16 neighbours of every page touched, which put ~15 MB
    /// of a 95 MB binary in RSS. Marks the executable's read-only mappings MADV_RANDOM and drops what is
    /// mapped so far; the pages in use come back on their next touch. Returns the bytes advised, or nil.
    @discardableResult
    public static func trimExecutableMappings() -> Int? {
        let n = bearing_trim_executable_mappings()
        return n < 0 ? nil : n
    }

    /// C's stdout, line-buffered (for a reader on a pipe).
    public static func lineBufferStandardOutput() { bearing_line_buffer_stdout() }
    /// C's stdout and stderr streams.
    public static var standardOutput: UnsafeMutablePointer<FILE> { bearing_stdout() }
    public static var standardError: UnsafeMutablePointer<FILE> { bearing_stderr() }

    public static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// uname(2): the kernel's name, release and the machine's architecture (`Linux`, `6.1.0-…`, `aarch64`); nil
    /// when it fails.
    public static func systemName() -> (sysname: String, release: String, machine: String)? {
        var u = utsname()
        guard uname(&u) == 0 else { return nil }
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
        }
        return (text(u.sysname), text(u.release), text(u.machine))
    }

    public static func wallClock() -> (seconds: Int64, nanoseconds: Int32) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return (Int64(ts.tv_sec), Int32(ts.tv_nsec))
    }
}

extension GPSTimestamp {
    /// The wall clock now (CLOCK_REALTIME).
    public static func now() -> GPSTimestamp {
        let t = Syscall.wallClock()
        return GPSTimestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
    }
}
