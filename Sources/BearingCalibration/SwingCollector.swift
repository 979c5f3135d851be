import BearingModel

/// A GNSS swing's epochs as a run delivers them (`bearing swing`): the attitude stream's rate of turn
/// integrated into the gyroscope's heading, and each GNSS epoch paired with the attitude that came last
/// before it (arrival order: the two clocks need not agree). Pure: the caller feeds values in order.
public struct SwingCollector: Sendable {
    public let limits: SwingLimits
    public private(set) var samples: [SwingSample] = []
    /// The magnetic variation (true − magnetic heading) the attitudes carried, degrees east; nil: none yet.
    public private(set) var variation: Double?
    /// The gyroscope's heading (degrees clockwise, unwrapped) and the latest attitude.
    private var gyroHeading = 0.0
    private var latest: (time: Double, compass: Double, rate: Double)?
    /// The least and most gyroscope heading seen since the first epoch: how far the vehicle has turned.
    private var turnRange: (low: Double, high: Double)?

    public init(limits: SwingLimits = SwingLimits()) { self.limits = limits }

    /// One attitude at `time` (seconds): the compass heading before any deviation (degrees magnetic), the
    /// rate of turn about the vertical (°/s, positive clockwise) and, when known, the variation.
    public mutating func attitude(time: Double, compassHeading: Double, rateOfTurn: Double, variation: Double?) {
        guard time.isFinite, compassHeading.isFinite, rateOfTurn.isFinite else { return }
        if let last = latest, time > last.time, time - last.time < 5 {
            gyroHeading += (last.rate + rateOfTurn) / 2 * (time - last.time)
        }
        latest = (time, AttitudeAngles.normalizedDegrees(compassHeading), rateOfTurn)
        if let variation, variation.isFinite { self.variation = variation }
    }

    /// One GNSS epoch at `time` (seconds): speed (m/s) and course (degrees true) over ground, `eph` and `eps`
    /// (m, m/s) when known. Returns whether it was kept (an attitude came before it).
    @discardableResult
    public mutating func epoch(time: Double, speed: Double, track: Double, eph: Double?, eps: Double?) -> Bool {
        guard let a = latest, time.isFinite, speed.isFinite, track.isFinite else { return false }
        samples.append(SwingSample(time: time, gyroHeading: gyroHeading, compassHeading: a.compass, speed: speed,
                                   track: track, eph: eph, eps: eps))
        let range = turnRange ?? (gyroHeading, gyroHeading)
        turnRange = (min(range.low, gyroHeading), max(range.high, gyroHeading))
        return true
    }

    /// Degrees turned since the first epoch (the span of the gyroscope's heading).
    public var turned: Double { turnRange.map { $0.high - $0.low } ?? 0 }

    /// Heading sectors (of `limits.sectors`) holding `limits.epochsPerSector` epochs at speed.
    public var sectorsCovered: Int {
        SwingSolver.sectorCounts(samples.lazy.filter { $0.speed >= limits.minimumSpeed }, sectors: limits.sectors)
            .filter { $0 >= limits.epochsPerSector }.count
    }

    /// Whether the swing has what a good curve needs: every sector, and two whole turns (a current ignored
    /// averages out only over whole circles; two let the solver tell it from the deviation).
    public var isComplete: Bool { sectorsCovered == limits.sectors && turned >= 720 }

    /// One line for the terminal: how far the swing has got, and what to do next.
    public var progress: String {
        let last = samples.last
        let speed = last.map { String(printf: "%.1f m/s", $0.speed) } ?? "no fix yet"
        let advice: String
        if last == nil { advice = "waiting for GNSS epochs with speed and course" }
        else if let s = last?.speed, s < limits.minimumSpeed { advice = String(printf: "speed up: at least %.1f m/s over ground", limits.minimumSpeed) }
        else if isComplete { advice = "complete" }
        else { advice = String(printf: "keep turning slowly (under %.0f °/s) at a steady speed", limits.maximumTurnRate) }
        return String(printf: "%d of %d sectors, turned %.0f° of 720°, %@, %d epochs: %@", sectorsCovered, limits.sectors, turned, speed, samples.count, advice)
    }

    /// The swing's solution (`SwingSolver`), or why there is none.
    public func solve(solveCurrent: Bool = true) throws(SwingError) -> SwingResult {
        guard let variation else {
            throw SwingError("no variation: the attitudes carried no true heading (heading.true_north off, or no fix and no fallback position)")
        }
        return try SwingSolver.solve(samples, variation: variation, limits: limits, solveCurrent: solveCurrent)
    }
}
