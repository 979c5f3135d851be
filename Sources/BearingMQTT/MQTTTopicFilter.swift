/// An MQTT 3.1.1 topic filter (§4.7): levels split at `/` (an empty level is a level); `+` is any one level,
/// `#` (alone in the last level) the parent level and any number below it; a filter whose first level is a
/// wildcard does not match a topic starting with `$` (`$SYS/…`, §4.7.2).
public struct MQTTTopicFilter: Equatable, Sendable, CustomStringConvertible {
    public let levels: [Substring]

    /// Nil when `filter` is not one: empty, or a wildcard sharing its level, or `#` not last.
    public init?(_ filter: String) {
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        guard !filter.isEmpty else { return nil }
        for (i, level) in levels.enumerated() where level.contains("+") || level.contains("#") {
            guard level == "+" || (level == "#" && i == levels.count - 1) else { return nil }
        }
        self.levels = levels
    }

    public var description: String { levels.joined(separator: "/") }

    /// Whether `topic` (a topic name: no wildcards) is one this filter matches.
    public func matches(_ topic: String) -> Bool {
        guard !topic.isEmpty, !topic.contains("+"), !topic.contains("#") else { return false }
        return Self.overlap(levels, topic.split(separator: "/", omittingEmptySubsequences: false))
    }

    /// Whether some topic matches both this filter and `other`: a subscription to one receives messages
    /// published to the other's topics.
    public func overlaps(_ other: MQTTTopicFilter) -> Bool {
        Self.overlap(levels, other.levels)
    }

    private static func overlap(_ a: [Substring], _ b: [Substring]) -> Bool {
        func isWildcard(_ level: Substring) -> Bool { level == "+" || level == "#" }
        // `$` topics: only a literal first level reaches them.
        if let a0 = a.first, let b0 = b.first,
           (isWildcard(a0) && !isWildcard(b0) && b0.hasPrefix("$")) || (isWildcard(b0) && !isWildcard(a0) && a0.hasPrefix("$")) {
            return false
        }
        var i = 0
        while true {
            let x = i < a.count ? a[i] : nil, y = i < b.count ? b[i] : nil
            if x == "#" || y == "#" { return true } // incl. the parent level: `a/#` matches `a`
            guard let x, let y else { return x == nil && y == nil }
            guard x == "+" || y == "+" || x == y else { return false }
            i += 1
        }
    }
}
