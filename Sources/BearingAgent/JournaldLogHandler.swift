import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// A swift-log handler writing one line per message to stderr. When stderr is not a terminal
/// (journald, a pipe), each line starts with the syslog priority `<N>` that journald reads, and no
/// timestamp (journald adds its own); on a terminal it shows a timestamp and the level.
public struct JournaldLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    private let label: String
    private let journald: Bool

    public init(label: String, level: Logger.Level, journald: Bool = isatty(STDERR_FILENO) == 0) {
        self.label = label
        self.logLevel = level
        self.journald = journald
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
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

    public func log(event: LogEvent) {
        var line = journald ? "<\(Self.priority(event.level))>" : "\(Self.timestamp()) \(event.level.rawValue.uppercased()) "
        line += event.message.description
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        // One line per message: a newline inside a message would split it into two journal entries.
        line = line.replacingOccurrences(of: "\n", with: " ⏎ ") + "\n"
        line.utf8CString.withUnsafeBufferPointer { buf in
            var offset = 0
            let total = buf.count - 1
            while offset < total {
                let n = write(STDERR_FILENO, buf.baseAddress! + offset, total - offset)
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
        var buf = [CChar](repeating: 0, count: 32)
        let n = strftime(&buf, 32, "%H:%M:%S", &tm)
        return String(decoding: buf.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self) + String(format: ".%03d", Int(ts.tv_nsec / 1_000_000))
    }
}
