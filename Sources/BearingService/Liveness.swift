/// Decides whether every part of the daemon has shown progress lately, so that systemd's watchdog is fed
/// only while the whole daemon works: a part that counts turns (the pipeline queue draining a probe, the
/// socket loop) must have counted within `limit` seconds; a part that may block (a source thread in a
/// socket read or an I2C transfer) must not have been inside one call for longer than `limit`.
public struct Liveness: Sendable {
    /// What one part shows at one moment.
    public struct Evidence: Sendable, Equatable {
        public var part: String
        /// A count that grows while the part makes progress.
        public var count: UInt64?
        /// When the part entered the blocking call it is in now (monotonic seconds); nil outside one.
        public var inCallSince: Double?

        public static func progress(_ part: String, _ count: UInt64) -> Evidence { Evidence(part: part, count: count) }
        public static func call(_ part: String, since: Double?) -> Evidence { Evidence(part: part, inCallSince: since) }
    }

    public let limit: Double
    private var lastCount: [String: (count: UInt64, changed: Double)] = [:]

    public init(limit: Double) { self.limit = limit }

    /// The parts that look stuck at `now`, each with why; empty when every part is alive.
    public mutating func stuck(_ evidence: [Evidence], now: Double) -> [String] {
        var out: [String] = []
        for e in evidence {
            if let count = e.count {
                if let last = lastCount[e.part], last.count == count {
                    if now - last.changed > limit { out.append("\(e.part): no progress for \(Self.seconds(now - last.changed))") }
                } else {
                    lastCount[e.part] = (count, now)
                }
            }
            if let since = e.inCallSince, now - since > limit {
                out.append("\(e.part): inside one call for \(Self.seconds(now - since))")
            }
        }
        return out
    }

    static func seconds(_ s: Double) -> String {
        let tenths = (s * 10).rounded()
        return "\(Int(tenths) / 10).\(Int(tenths) % 10) s"
    }
}
