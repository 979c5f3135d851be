import BearingAttitude

/// The samples' clock, made monotonic for the fusion.
///
/// The readers stamp each sample with the system's wall clock (`CLOCK_REALTIME`), which NTP or GPS may step back: ntpd
/// steps any offset over 128 ms, chrony's `makestep` and `gpsd`-fed time any configured, and an RTC that ran fast, or a
/// clock set by hand, is set back by minutes or hours. Everything in the fusion that keeps time from the samples (the
/// filter's intervals, the rest test, online calibration's fits and windows, the course's trim, the mounting's checks)
/// would then wait until the clock came back to where it was: the filter dropped every sample until its own clock caught
/// up, an hour of samples for an hour's step, while the heading published stood still
/// (`RoadDriveTests.testTheSamplesClockSteppedWhileDriving`).
///
/// A sample stamped more than `stepTolerance` before the latest is taken as the clock stepped back: from it on, the
/// stamps are shifted so that it follows the latest by the latest interval between samples, as it did in real time.
/// Samples a little out of order (two readers' threads, each stamping its own) are left as they are: each component
/// already takes only what is newer than it has.
///
/// With each sample's monotonic time (below), a smaller step back is taken out too: ntpd steps the clock at any offset
/// over 0.128 s, and until the clock caught up every component dropped the samples stamped behind what it had, the
/// gyroscope's turn over that time never integrated (`backTolerance`).
///
/// A step forward cannot be told from samples lost (a sensor reopened after the reader's back-off) by the stamps alone.
/// Where each sample also comes with its time on a monotonic clock (`elapsed`: the daemon's pipeline clock, when the
/// sample was handed over, which the black box records and a replay sets again), it can: that clock is never stepped,
/// and on Linux NTP's and chrony's slewing moves `CLOCK_REALTIME` and `CLOCK_MONOTONIC` together (clock_gettime(2)),
/// so the fusion's time less the monotonic time is one offset less the sample's latency from its stamp to its hand-over,
/// which is never negative. The largest seen (`offset`) is the offset within the smallest latency; a sample whose own is
/// more than `forwardTolerance` above it was stamped by a clock stepped forward, and is put after the latest as after a
/// step back, or, when the monotonic clock says samples were lost across the step, after the gap it says. A latency is
/// never taken for a step (a pipeline that stalled hands its samples over late, with their stamps right). Without the
/// monotonic time (a file of samples, the simulator), a step forward is left as a gap.
///
/// What is published keeps the sample's own stamp; whatever is timed (the estimators, the course's trim fading, the
/// deviation's settling, the interference episodes that the journal and CALIBRATION time) is on this clock, and a time
/// told from it is turned back into the samples' frame (`stamp(ofTime:)`).
///
/// A sample stamped just before a step back and handed over after the first one stamped after it comes out a step
/// ahead; the samples after it are then taken as a step back, and the fusion's time goes on from there: once, one gap
/// the size of the step, as a step forward (with the monotonic time, that is taken out too).
public struct SampleClock: Sendable, Equatable {
    /// How far (s) a sample may come before the latest without being taken as a step: the readers' threads hand samples
    /// over within milliseconds of their stamps, or a few hundred under load on a single-core board.
    static let stepTolerance = 0.5
    /// The longest interval (s) between samples that is no gap: a sample after a step is put after the latest by the
    /// latest interval no longer than this.
    static let longestInterval = 0.1
    /// How far (s) a sample's stamp may run ahead of its monotonic time, against the largest offset seen, before it is
    /// taken as a step forward. The latency only ever lowers the offset, so this need only exceed the two clocks' reads'
    /// own granularity; a step this small is a gap of at most `longestInterval`.
    static let forwardTolerance = 0.1
    /// How far (s) behind the latest a sample must be stamped, its stamp more than `forwardTolerance` below where its
    /// monotonic time puts it, to be taken as the first after a step back smaller than `stepTolerance` (ntpd steps any
    /// offset over 0.128 s). It is taken out at once, on trial: the next sample decides. Stamped behind the latest
    /// before the trial and below its offset too, it confirms the step; otherwise the first was a sample handed over
    /// late (its reader's thread held between its stamp and its hand-over: the other reader's next sample, or its own
    /// next, is stamped after it), and the trial is undone. Samples handed over late together (the pipeline stalled)
    /// keep their stamps' order and are never behind.
    static let backTolerance = 0.05
    /// Seconds on the monotonic clock from the first sample that came with one before a step is told from it: the
    /// offset is the largest difference seen, and the first samples may all have been handed over late (the pipeline
    /// busy as the daemon starts); the first handed over at once would otherwise rise above them as a step forward.
    static let offsetWarmUp = 1.0

    /// Seconds added to the stamps.
    public private(set) var shift = 0.0
    /// How many steps have been taken out.
    private(set) var steps = 0
    /// The last step taken out (s, forward positive): what the stamps did, less the time that passed.
    private(set) var lastStep = 0.0
    private var latest: Double?
    private var interval = 0.0
    /// The largest fusion time less monotonic time seen (nil before the first sample with one).
    private var offset: Double?
    /// The first sample's monotonic time (`offsetWarmUp`).
    private var firstElapsed: Double?
    /// A small step back taken out on trial at the latest sample (`backTolerance`): the state before it.
    private var trial: Trial?
    private struct Trial: Equatable {
        var shift: Double, lastStep: Double, latest: Double, interval: Double
    }

    public init() {}

    /// The fusion's time of `stamp` (seconds) in the samples' frame now, without taking it as a sample's: what the
    /// latest sample's stamp was shifted by holds for a stamp taken since.
    func time(ofStamp stamp: Double) -> Double { stamp + shift }

    /// The stamp, in the samples' frame now, of the fusion's time `t`: what is told keeps the samples' stamps.
    func stamp(ofTime t: Double) -> Double { t - shift }

    /// The fusion's time for a sample stamped `stamp` (seconds); `elapsed`, its time on a monotonic clock (seconds), where
    /// known.
    public mutating func time(_ stamp: Double, elapsed: Double? = nil) -> Double {
        guard stamp.isFinite else { return stamp }
        let e = elapsed.flatMap { $0.isFinite ? $0 : nil }
        if firstElapsed == nil { firstElapsed = e }
        /// The offset, once it has had `offsetWarmUp` to settle.
        let settled = e.flatMap { e in firstElapsed.flatMap { e - $0 >= Self.offsetWarmUp ? offset : nil } }
        /// Whether `t` is behind `last` and below where its monotonic time puts it: a step back, or handed over late.
        func behind(_ t: Double, _ last: Double) -> Bool {
            guard let e, let o = settled else { return false }
            return t < last && t - e < o - Self.forwardTolerance
        }
        if let trial {
            self.trial = nil
            if behind(stamp + trial.shift, trial.latest) {
                steps += 1
            } else {
                (shift, lastStep, latest, interval) = (trial.shift, trial.lastStep, trial.latest, trial.interval)
            }
        }
        var t = stamp + shift
        guard let last = latest else {
            latest = t
            offset = e.map { t - $0 }
            return t
        }
        if t < last - Self.stepTolerance {
            resume(at: &t, after: last, elapsed: e)
        } else if let e, let o = settled, t - e > o + Self.forwardTolerance {
            resume(at: &t, after: last, elapsed: e)
        } else if behind(t, last), t < last - Self.backTolerance {
            trial = Trial(shift: shift, lastStep: lastStep, latest: last, interval: interval)
            resume(at: &t, after: last, elapsed: e, counted: false)
        } else if t > last, t - last <= Self.longestInterval {
            interval = t - last
        }
        if let e { offset = max(offset ?? -.infinity, t - e) }
        latest = max(last, t)
        return t
    }

    /// A step: the sample stamped `t` (shifted) goes on after the latest, `last`, by the latest interval, or where its
    /// monotonic time puts it when that says samples were lost (more than `longestInterval` after the latest). Not
    /// `counted` in `steps` while on trial.
    private mutating func resume(at t: inout Double, after last: Double, elapsed e: Double?, counted: Bool = true) {
        var resumed = last + interval
        if let e, let o = offset, e + o - last > Self.longestInterval { resumed = e + o }
        lastStep = t - resumed
        shift -= lastStep
        t = resumed
        if counted { steps += 1 }
    }
}

/// What the journal says when the fusion took a step of the samples' clock out (`AttitudeFusion.onClockStep`): one line,
/// at most one a minute (two time sources that disagree step it back and forth), with how many more steps there were
/// since the last told. Pure: the caller logs the line it returns. Timed on the caller's monotonic clock (seconds).
public struct ClockStepJournal: Sendable {
    private var pace: JournalPace
    /// Steps taken out since the last line, not told.
    private var untold = 0

    public init(interval: Double = 60) {
        pace = JournalPace(interval: interval)
    }

    /// The line for a step of `step` seconds (negative: back) at `time`, if one is due.
    public mutating func line(forStep step: Double, at time: Double) -> String? {
        guard pace.allows(at: time) else {
            untold += 1
            return nil
        }
        pace.told(at: time)
        defer { untold = 0 }
        return "the system clock stepped \(step >= 0 ? "forward" : "back") by \(String(printf: "%.1f", abs(step))) s"
            + (untold > 0 ? " (and \(untold) more times since the last told)" : "")
            + ": the sensors' samples are stamped by it, and the fusion's time goes on across the step"
    }
}
