/// Reconnect delays: `initial`, doubling per failed attempt up to `maximum`; `reset()` after a session
/// that delivered data. The one backoff every source (gpsd, the magnetometer, a client) uses.
public struct Backoff: Equatable, Sendable {
    public let initial: Double
    public let maximum: Double
    public private(set) var next: Double
    public private(set) var attempt = 0

    public init(initial: Double, maximum: Double) {
        self.initial = initial
        self.maximum = max(initial, maximum)
        next = initial
    }

    /// The delay before the next attempt; the one after it doubles.
    public mutating func delay() -> Double {
        attempt += 1
        let d = next
        next = min(next * 2, maximum)
        return d
    }

    public mutating func reset() {
        next = initial
        attempt = 0
    }
}
