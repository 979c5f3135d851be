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
        return Self.oneLine(line) + "\n"
    }

    /// `text` as one journal line: a newline shows as ` ⏎ ` (it would split the message into two entries),
    /// and every other control character (C0, DEL, C1, U+2028, U+2029) as its JSON escape (`\r`, `\u001b`),
    /// so nothing a message quotes, whatever its source, puts raw NUL, ESC or CR in the journal or on a terminal.
    public static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = String.UnicodeScalarView()
        for s in text.unicodeScalars {
            switch s.value {
            case 0x0A: out.append(contentsOf: " ⏎ ".unicodeScalars)
            case 0x0D: out.append(contentsOf: "\\r".unicodeScalars)
            case 0x09: out.append(contentsOf: "\\t".unicodeScalars)
            case _ where isControl(s):
                let hex = Array("0123456789abcdef".unicodeScalars)
                out.append(contentsOf: "\\u".unicodeScalars)
                for shift: UInt32 in [12, 8, 4, 0] { out.append(hex[Int(s.value >> shift & 0xF)]) }
            default: out.append(s)
            }
        }
        return String(out)
    }

    static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7F..<0xA0).contains(s.value) || s.value == 0x2028 || s.value == 0x2029
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
