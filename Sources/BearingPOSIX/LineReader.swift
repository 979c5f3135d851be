#if canImport(Glibc)
import Glibc
#endif

/// Newline-delimited lines (LF or CRLF) from a stream descriptor (a client's end of the agent's socket).
public struct LineReader {
    public enum Event: Equatable {
        /// One line, without its newline.
        case line([UInt8])
        /// The other end closed the stream.
        case end
        /// No complete line before the deadline.
        case timeout
    }

    public let fd: Int32
    /// Named in errors.
    public let subject: String
    private var pending: [UInt8] = []
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    public init(fd: Int32, subject: String) {
        self.fd = fd
        self.subject = subject
    }

    /// The next line; blocks until one is complete, the stream ends, or (when given) `deadline`
    /// (`Syscall.monotonicSeconds()` time) passes.
    public mutating func next(deadline: Double? = nil) throws(SystemError) -> Event {
        while true {
            if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                // gpsd ends lines with CRLF; the CR is not part of the line.
                let end = nl > pending.startIndex && pending[nl - 1] == UInt8(ascii: "\r") ? nl - 1 : nl
                let line = Array(pending[..<end])
                pending.removeSubrange(...nl)
                return .line(line)
            }
            if let deadline {
                let left = deadline - Syscall.monotonicSeconds()
                if left <= 0 { return .timeout }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = try Syscall.check("poll", subject) { poll(&p, 1, Int32(min(left, 3600) * 1000) + 1) }
                if ready == 0 { continue }
            }
            let fd = self.fd
            let n = try Syscall.check("read", subject) { buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
            if n == 0 { return .end }
            pending.append(contentsOf: buffer[0..<n])
        }
    }
}
