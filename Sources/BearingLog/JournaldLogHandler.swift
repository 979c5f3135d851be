#if canImport(Glibc)
import Glibc
#endif

/// Writes one line per message to stderr. When stderr is not a terminal (journald, a pipe), each line starts
/// with the syslog priority `<N>` that journald reads, and no timestamp (journald adds its own); on a terminal
/// it shows a timestamp and the level.
public struct JournaldLogHandler: LogHandler {
    private let journald: Bool

    public init(journald: Bool = isatty(STDERR_FILENO) == 0) {
        self.journald = journald
    }

    /// The syslog priority for a level (RFC 5424 severities).
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// The line written for a message, newline included.
    public func line(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = journald ? "<\(Self.priority(level))>" : "\(Self.timestamp()) \(level.rawValue.uppercased()) "
        line += message
        if !metadata.isEmpty {
            line += " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        // One line per message: a newline inside a message would split it into two journal entries.
        return line.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ⏎ ") + "\n"
    }

    public func log(level: Logger.Level, message: String, metadata: Logger.Metadata) {
        var text = line(level: level, message: message, metadata: metadata)
        text.withUTF8 { buf in
            var offset = 0
            while offset < buf.count {
                let n = write(STDERR_FILENO, buf.baseAddress! + offset, buf.count - offset)
                if n < 0 { if errno == EINTR { continue } else { return } }
                offset += n
            }
        }
    }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        var tm = tm()
        var secs = ts.tv_sec
        localtime_r(&secs, &tm)
        let millis = Int(ts.tv_nsec / 1_000_000)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)).\(ms)"
    }
}
