import BearingModel

/// Why the field is not taken as the Earth's just now.
public enum Interference: String, Codable, Sendable {
    /// Its magnitude, or its dip, is off the calibration's field; a step: such a disturbance lasted and is
    /// being learnt as a new hard iron.
    case norm, dip, step
}

/// Magnetic interference as episodes, from the judgement of each field sample (`OnlineMagnetometerCalibration.
/// interference`): an episode begins with the first disturbed sample and ends once the field has been undisturbed
/// for `settle` seconds. A field that flaps about a threshold (beside a steel hull, a pump switching, a cable whose
/// current comes and goes) is then one episode, not two events a second. Pure: the times are the samples'.
public struct InterferenceEpisodes: Sendable {
    public struct Episode: Equatable, Sendable {
        /// Why it began; `step` once it became a step of the hard iron.
        public var cause: Interference
        public var began: Double
        /// The latest disturbed sample's time, and when it ended (nil: it goes on).
        public var lastDisturbed: Double
        public var ended: Double?
        /// The largest departure of a disturbed sample from the field expected: its magnitude (% of the field) and
        /// its dip (degrees).
        public var largestNorm: Double
        public var largestDip: Double
        /// How many times the field went from undisturbed to disturbed within it (1: it never flapped).
        public var onsets: Int
        /// Seconds from its beginning to its latest disturbed sample.
        public var duration: Double { lastDisturbed - began }
        /// Seconds it has gone on at `time` (what a client is told of the episode going on).
        public func seconds(at time: Double) -> Double { max(0, time - began) }
    }

    public enum Event: Equatable, Sendable {
        case began(Episode)
        case ended(Episode)
        public var episode: Episode {
            switch self {
            case .began(let e), .ended(let e): return e
            }
        }
        /// When it happened: the episode's beginning, or its end.
        public var time: Double {
            switch self {
            case .began(let e): return e.began
            case .ended(let e): return e.ended ?? e.lastDisturbed
            }
        }
    }

    /// Seconds the field must stay undisturbed for an episode to end.
    public var settle: Double
    /// The episode going on (nil: none).
    public private(set) var current: Episode?
    private var wasDisturbed = false

    public init(settle: Double = 2) {
        self.settle = settle
    }

    /// One sample's judgement at `time`: `cause` nil when it was taken as the Earth's field; `normOff` (% of the
    /// field) and `dipOff` (degrees) how far it was off. Returns the episode that began or ended with it.
    public mutating func observe(_ cause: Interference?, normOff: Double, dipOff: Double, at time: Double) -> Event? {
        defer { wasDisturbed = cause != nil }
        guard let cause else {
            guard let e = current, time - e.lastDisturbed >= settle else { return nil }
            var ended = e
            ended.ended = time
            current = nil
            return .ended(ended)
        }
        let norm = normOff.isFinite ? abs(normOff) : 0, dip = dipOff.isFinite ? abs(dipOff) : 0
        guard var e = current else {
            let e = Episode(cause: cause, began: time, lastDisturbed: time, largestNorm: norm, largestDip: dip, onsets: 1)
            current = e
            return .began(e)
        }
        e.lastDisturbed = time
        e.largestNorm = max(e.largestNorm, norm)
        e.largestDip = max(e.largestDip, dip)
        if cause == .step { e.cause = .step }
        if !wasDisturbed { e.onsets += 1 }
        current = e
        return nil
    }
}

/// What the journal says of interference episodes: a line when one begins and one when it ends, with its length
/// and size; while episodes keep coming (a flapping source), at most one line every `interval` seconds, counting
/// those not told one by one. Pure: the caller logs the lines it returns. Timed on the events' own times, the clock the
/// episodes were observed on.
public struct InterferenceJournal: Sendable {
    public var interval: Double {
        get { pace.interval }
        set { pace.interval = newValue }
    }
    private var pace: JournalPace
    /// Whether the episode going on was told when it began (its end is told then too).
    private var toldCurrent = false
    /// Episodes not told one by one since the last line: how many, their seconds and their largest departures.
    private var quiet = (episodes: 0, seconds: 0.0, norm: 0.0, dip: 0.0)
    /// When the latest episode not told one by one ended.
    private var quietEnded: Double?

    public init(interval: Double = 60) {
        pace = JournalPace(interval: interval)
    }

    /// The line for `event`, if one is due.
    public mutating func line(for event: InterferenceEpisodes.Event) -> String? {
        let time = event.time
        switch event {
        case .began(let e):
            // Told when the last line is a minute old and no untold episode ended within the minute (the source
            // is not flapping); a flapping source's episodes are counted, and told in a summary when one ends.
            guard pace.allows(at: time), quietEnded.map({ time - $0 >= interval }) ?? true else {
                toldCurrent = false
                return nil
            }
            toldCurrent = true
            pace.told(at: time)
            var line = "magnetic interference began (\(Self.size(e.cause, norm: e.largestNorm, dip: e.largestDip))): the heading rides on the gyroscope and nothing is learnt from the field until it passes"
            if quiet.episodes > 0 {
                line += "; \(quietSummary) before it"
                quiet = (0, 0, 0, 0)
            }
            return line
        case .ended(let e):
            if toldCurrent {
                toldCurrent = false
                pace.told(at: time)
                let flaps = e.onsets > 1 ? ", coming and going \(e.onsets) times" : ""
                return String(printf: "magnetic interference ended after %.1f s", e.duration) + flaps
                    + String(printf: " (largest: norm %.1f %% off the field, dip %.1f° off)", e.largestNorm, e.largestDip)
            }
            quiet.episodes += 1
            quietEnded = time
            quiet.seconds += e.duration
            quiet.norm = max(quiet.norm, e.largestNorm)
            quiet.dip = max(quiet.dip, e.largestDip)
            guard pace.lastLine != nil, pace.allows(at: time) else { return nil }
            pace.told(at: time)
            defer { quiet = (0, 0, 0, 0) }
            return "magnetic interference: \(quietSummary); a source that keeps coming back is told at most once a minute"
        }
    }

    private var quietSummary: String {
        String(printf: "%d more episodes not told one by one (%.1f s in all, largest: norm %.1f %% off the field, dip %.1f° off)",
                    quiet.episodes, quiet.seconds, quiet.norm, quiet.dip)
    }

    static func size(_ cause: Interference, norm: Double, dip: Double) -> String {
        switch cause {
        case .norm: return String(printf: "norm %.1f %% off the field", norm)
        case .dip: return String(printf: "dip %.1f° off the field's", dip)
        case .step: return "a step of the hard iron"
        }
    }
}

/// At most one journal line every `interval` seconds, on the events' own clock: the pace the journal keeps for a source
/// that keeps coming back (interference episodes, the samples' clock stepping).
public struct JournalPace: Sendable {
    public var interval: Double
    /// When the last line was told.
    public private(set) var lastLine: Double?

    public init(interval: Double = 60) {
        self.interval = interval
    }

    /// Whether a line at `time` keeps the pace (the first one always does).
    public func allows(at time: Double) -> Bool { lastLine.map { time - $0 >= interval } ?? true }

    /// A line was told at `time`.
    public mutating func told(at time: Double) { lastLine = time }
}
