/// How often a repeating condition is told in the journal: the first at once, then at most one line an
/// `interval`, each saying how many went untold since the last. The one rule for a saturated axis (per source)
/// and the web door's refusals (per peer and kind); pure, on the caller's clock (seconds).
public struct LogThrottle: Equatable, Sendable {
    public let interval: Double
    /// When the last line was told.
    public private(set) var last: Double?
    private var untold = 0

    public init(interval: Double) {
        self.interval = interval
    }

    /// One occurrence at `now`: nil when it goes untold (counted), else how many went untold before it.
    public mutating func admit(at now: Double) -> Int? {
        if let last, now - last < interval {
            untold += 1
            return nil
        }
        defer { last = now; untold = 0 }
        return untold
    }

    /// Whether nothing was told within the last `interval` at `now` (an entry that may be forgotten).
    public func isQuiet(at now: Double) -> Bool { last.map { now - $0 >= interval } ?? true }
}
