import BearingModel
/// A stretch of time the board was held still, averaged: what an accelerometer calibration or a mounting
/// level is computed from.
public struct StaticPose: Equatable, Sendable {
    /// Time of the first sample of the stretch, s (the samples' own clock).
    public var start: Double
    /// From the first to the last sample of the stretch, s.
    public var duration: Double
    /// Samples averaged (the stretch without its trimmed ends).
    public var samples: Int
    /// The mean specific force, m/s², in the samples' axes.
    public var specificForce: Vector3
    /// RMS distance of the averaged samples from their mean, m/s².
    public var noise: Double
    /// The mean angular rate, rad/s (the gyroscope's bias, since the board was still); nil without a gyroscope.
    public var angularRate: Vector3?

    public init(start: Double, duration: Double, samples: Int, specificForce: Vector3, noise: Double, angularRate: Vector3?) {
        self.start = start
        self.duration = duration
        self.samples = samples
        self.specificForce = specificForce
        self.noise = noise
        self.angularRate = angularRate
    }
}

/// Finds the stretches where the board is still and averages each into a `StaticPose`.
///
/// A stretch goes on while every accelerometer sample stays within `accelerometer` of the stretch's mean so
/// far and, with a gyroscope, every rate within `gyroscope` of the stretch's mean rate and below
/// `maximumRate` (so a steady turn is not taken for stillness); a sample that breaks it starts the next one.
/// A stretch lasting `minimumDuration` gives a pose: the mean of its samples without `trim` seconds at
/// either end, where the hand was still letting go or already moving. Accelerometer-only input (no
/// angular rate) is judged by the accelerometer alone.
public struct StaticPoseDetector: Sendable {
    public struct Thresholds: Equatable, Sendable {
        /// Shortest still stretch that makes a pose, s.
        public var minimumDuration = 1.0
        /// Largest distance of a sample from the stretch's mean specific force, m/s².
        public var accelerometer = 0.3
        /// Largest distance of a rate from the stretch's mean rate, °/s.
        public var gyroscope = 3.0
        /// Largest rate of any sample, °/s: above gyroscope biases, below any deliberate turn.
        public var maximumRate = 10.0
        /// Dropped at each end of a stretch before averaging, s.
        public var trim = 0.1
        /// A longer gap between samples ends the stretch, s. Shorter gaps are no move (a busy board's reader skips reads,
        /// a client of the daemon may lose lines): the samples after one are judged against the stretch as any are, so
        /// a board moved while none came still ends it. Nor is a sample at the time of the one before (times on the
        /// wire are whole milliseconds); a time that goes back ends the stretch.
        public var maximumGap = 2.0

        public init() {}
    }

    public let thresholds: Thresholds
    /// The poses found so far, in time order.
    public private(set) var poses: [StaticPose] = []
    /// The longest still stretch seen, s (a stretch still going included).
    public private(set) var longestStill = 0.0

    private var run: [(time: Double, force: Vector3, rate: Vector3?)] = []
    private var forceSum = Vector3.zero
    private var rateSum = Vector3.zero

    public init(thresholds: Thresholds = Thresholds()) {
        self.thresholds = thresholds
    }

    /// Feeds one sample (specific force in m/s², angular rate in rad/s); returns the pose of a stretch this
    /// sample ended, when that stretch was long enough.
    @discardableResult
    public mutating func add(time: Double, specificForce: Vector3, angularRate: Vector3?) -> StaticPose? {
        guard specificForce.isFinite, time.isFinite, angularRate?.isFinite ?? true else { return nil }
        let degrees = 180 / Double.pi
        let turning = angularRate.map { $0.length * degrees > thresholds.maximumRate } ?? false
        var ended: StaticPose?
        if let last = run.last {
            let n = Double(run.count)
            let gap = time - last.time
            let moved = (specificForce - forceSum / n).length >= thresholds.accelerometer
            let rateMoved = angularRate.map { (($0 - rateSum / n).length * degrees) >= thresholds.gyroscope } ?? false
            if gap < 0 || gap > thresholds.maximumGap || moved || rateMoved || turning || (angularRate == nil) != (last.rate == nil) {
                ended = finish()
            }
        }
        guard !turning else { return ended }
        run.append((time, specificForce, angularRate))
        forceSum = forceSum + specificForce
        if let angularRate { rateSum = rateSum + angularRate }
        longestStill = max(longestStill, time - run[0].time)
        return ended
    }

    /// Ends the stretch now (the end of the data); returns its pose when it was long enough.
    @discardableResult
    public mutating func finish() -> StaticPose? {
        defer {
            run.removeAll(keepingCapacity: true)
            forceSum = .zero
            rateSum = .zero
        }
        guard let pose = pose(trimmingEnd: true) else { return nil }
        poses.append(pose)
        return pose
    }

    /// The stretch being held now, averaged so far (its end is not trimmed: it has not ended); nil when the
    /// board is moving. For "hold still" feedback, and for a level taken from the first long stretch.
    public var holding: StaticPose? { pose(trimmingEnd: false, minimum: 0) }

    private func pose(trimmingEnd: Bool, minimum: Double? = nil) -> StaticPose? {
        guard let first = run.first, let last = run.last, last.time - first.time >= (minimum ?? thresholds.minimumDuration) else { return nil }
        let from = first.time + thresholds.trim, to = trimmingEnd ? last.time - thresholds.trim : last.time
        var kept = run.filter { $0.time >= from && $0.time <= to }
        if kept.isEmpty { kept = run }
        var force = Vector3.zero, rate = Vector3.zero
        for s in kept {
            force = force + s.force
            if let r = s.rate { rate = rate + r }
        }
        let n = Double(kept.count)
        let mean = force / n
        var squares = 0.0
        for s in kept { let d = s.force - mean; squares += d.dot(d) }
        return StaticPose(start: first.time, duration: last.time - first.time, samples: kept.count, specificForce: mean,
                          noise: (squares / n).squareRoot(), angularRate: first.rate == nil ? nil : rate / n)
    }
}
