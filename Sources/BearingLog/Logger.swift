/// A label, a level and a handler: the daemon's log calls (`logger.info("…", metadata: ["key": "value"])`).
///
/// Bearing's own, in place of swift-log: swift-log 1.16 needs Swift tools 6.2 and Debian 13 ships Swift 6.0.3,
/// and all the daemon ever used of it was this call shape over one handler of its own (`JournaldLogHandler`).
/// Levels and their order are swift-log's (and so syslog's), so `log.level` in the config reads as before.
public struct Logger: Sendable {
    public enum Level: String, CaseIterable, Comparable, Sendable {
        case trace, debug, info, notice, warning, error, critical

        public static func < (a: Level, b: Level) -> Bool { a.order < b.order }
        private var order: Int { Level.allCases.firstIndex(of: self)! }
    }

    /// Key–value context printed after the message, sorted by key.
    public typealias Metadata = [String: String]

    public let label: String
    /// Messages below this level are not built (the message is an autoclosure) and not written.
    public var logLevel: Level
    private let handler: any LogHandler

    public init(label: String, level: Level = .info, handler: any LogHandler = JournaldLogHandler()) {
        self.label = label
        self.logLevel = level
        self.handler = handler
    }

    public func log(level: Level, _ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        guard level >= logLevel else { return }
        handler.log(level: level, message: message(), metadata: metadata() ?? [:])
    }

    public func trace(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .trace, message(), metadata: metadata())
    }
    public func debug(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .debug, message(), metadata: metadata())
    }
    public func info(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .info, message(), metadata: metadata())
    }
    public func notice(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .notice, message(), metadata: metadata())
    }
    public func warning(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .warning, message(), metadata: metadata())
    }
    public func error(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .error, message(), metadata: metadata())
    }
    public func critical(_ message: @autoclosure () -> String, metadata: @autoclosure () -> Metadata? = nil) {
        log(level: .critical, message(), metadata: metadata())
    }
}

/// Where a logger's lines go.
public protocol LogHandler: Sendable {
    func log(level: Logger.Level, message: String, metadata: Logger.Metadata)
}
