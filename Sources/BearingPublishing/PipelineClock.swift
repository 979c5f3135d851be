import BearingModel
import Dispatch
import OpenCombine
import OpenCombineDispatch
import Synchronization

/// The pipeline's clock. Its time is the time the value being handled entered the pipeline (monotonic
/// microseconds), stamped once per value, not read afresh by each operator — so the time-based operators
/// decide the same way when a recording is replayed: live, `stamp()` reads the clock as a value enters;
/// in a replay the recorded time is `set`. Delayed actions (a throttle's or debounce's timer) run live as
/// `asyncAfter` on the pipeline queue (those due at one time together, in the order they were scheduled),
/// each stamped and reported to `onTimer` (the black box records it);
/// in a replay they wait until the replay says they ran (`runTimer(due:)`) or, for a timer the recording
/// never saw (a changed chain), until the replay's time passes them (`runTimers(through:)`).
public final class PipelineClock: Sendable {
    public enum Mode: Sendable { case live, replay }

    public let mode: Mode
    private let state: Mutex<State>
    /// Told of each live timer as it runs (due time, then the time it ran), on the pipeline queue.
    private let onTimer: Mutex<(@Sendable (_ due: UInt64, _ time: UInt64) -> Void)?>

    private struct State: ~Copyable {
        var now: UInt64 = 0
        var wallTime = GPSTimestamp(seconds: 0)
        /// A replay's pending delayed actions.
        var timers: [Timer] = []
        var scheduled: UInt64 = 0
        /// Live: the delayed actions due at each time, in the order they were scheduled; one `asyncAfter`
        /// runs them all (libdispatch does not promise the order of timers with one deadline).
        var due: [UInt64: [Timer]] = [:]
    }

    /// A replay's pending delayed action.
    private struct Timer: Sendable {
        var due: UInt64
        var order: UInt64
        /// Only ever run on the pipeline queue, where it was scheduled.
        nonisolated(unsafe) var action: () -> Void
    }

    public init(_ mode: Mode = .live) {
        self.mode = mode
        state = Mutex(State(now: mode == .live ? Self.monotonicMicroseconds() : 0))
        onTimer = Mutex(nil)
    }

    /// Monotonic microseconds on libdispatch's clock (the one `asyncAfter` deadlines use).
    public static func monotonicMicroseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1000 }

    /// The time of the value being handled.
    public var now: UInt64 { state.withLock { $0.now } }

    /// The time of the value being handled, in seconds.
    public var seconds: Double { Self.seconds(now) }

    /// A time on this clock (microseconds, a record's time), in seconds.
    public static func seconds(_ time: UInt64) -> Double { Double(time) / 1e6 }

    /// The wall-clock time of the last state change handled (STATE objects carry it).
    public var wallTime: GPSTimestamp { state.withLock { $0.wallTime } }

    /// Live: reads the clock for a value entering now, and returns the time. On the pipeline queue.
    @discardableResult
    public func stamp() -> UInt64 {
        let t = Self.monotonicMicroseconds()
        state.withLock { $0.now = t }
        return t
    }

    /// Sets the time (a replay's record time), and the wall time when given. On the pipeline queue.
    public func set(_ time: UInt64, wallTime: GPSTimestamp? = nil) {
        state.withLock {
            $0.now = time
            if let wallTime { $0.wallTime = wallTime }
        }
    }

    /// Sets the wall time a state change is stamped with (live: now).
    public func setWallTime(_ t: GPSTimestamp) { state.withLock { $0.wallTime = t } }

    /// Who is told of each live timer as it runs; set before the pipeline starts.
    public func observeTimers(_ observer: (@Sendable (_ due: UInt64, _ time: UInt64) -> Void)?) {
        onTimer.withLock { $0 = observer }
    }

    func schedule(on queue: DispatchQueue, due: UInt64, _ action: @escaping () -> Void) {
        // Not Sendable, but only ever run on the pipeline queue, where it was scheduled.
        nonisolated(unsafe) let action = action
        switch mode {
        case .live:
            let first = state.withLock { s -> Bool in
                s.scheduled += 1
                let timer = Timer(due: due, order: s.scheduled, action: action)
                if s.due[due] == nil {
                    s.due[due] = [timer]
                    return true
                }
                s.due[due]!.append(timer)
                return false
            }
            guard first else { return }
            queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: max(1, due) * 1000)) { [self] in
                let batch = state.withLock { $0.due.removeValue(forKey: due) ?? [] }
                let observer = onTimer.withLock { $0 }
                for timer in batch {
                    let t = stamp()
                    observer?(due, t)
                    timer.action()
                }
            }
        case .replay:
            state.withLock { s in
                s.scheduled += 1
                s.timers.append(Timer(due: due, order: s.scheduled, action: action))
            }
        }
    }

    /// A replay: runs the earliest-scheduled pending action due at `due`, as the recording says one ran
    /// then. Returns false when none is pending (the chain that set it is not in this replay's config).
    @discardableResult
    public func runTimer(due: UInt64) -> Bool {
        let timer: Timer? = state.withLock { s in
            guard let i = s.timers.firstIndex(where: { $0.due == due }) else { return nil }
            return s.timers.remove(at: i)
        }
        guard let timer else { return false }
        timer.action()
        return true
    }

    /// A replay: runs, in due order, the pending actions due at or before `time` that `keep` does not
    /// hold back (the recording's own timers wait for their record), each at its due time.
    public func runTimers(through time: UInt64, keep: (UInt64) -> Bool = { _ in false }) {
        while true {
            let next: Timer? = state.withLock { s in
                var best: Int?
                for (i, t) in s.timers.enumerated() where t.due <= time && !keep(t.due) {
                    if let b = best, (s.timers[b].due, s.timers[b].order) <= (t.due, t.order) { continue }
                    best = i
                }
                guard let best else { return nil }
                let t = s.timers.remove(at: best)
                s.now = max(s.now, t.due)
                return t
            }
            guard let next else { return }
            next.action()
        }
    }

    /// A replay: how many delayed actions are pending.
    public var pendingTimers: Int { state.withLock { $0.timers.count } }
}

/// The pipeline queue as an OpenCombine scheduler on the pipeline's clock: `now` is `PipelineClock.now`;
/// an immediate action runs inline (everything that schedules is already on the pipeline queue, so this
/// is the queue's order without a hop); a delayed one goes to `PipelineClock`.
public struct PipelineScheduler: Scheduler, Sendable {
    public typealias SchedulerTimeType = DispatchQueue.OCombine.SchedulerTimeType
    public typealias SchedulerOptions = DispatchQueue.OCombine.SchedulerOptions

    public let entry: PipelineEntry
    public let clock: PipelineClock

    public init(entry: PipelineEntry, clock: PipelineClock) {
        self.entry = entry
        self.clock = clock
    }

    public var now: SchedulerTimeType { SchedulerTimeType(DispatchTime(uptimeNanoseconds: clock.now * 1000)) }
    public var minimumTolerance: SchedulerTimeType.Stride { .microseconds(1) }

    public func schedule(options: SchedulerOptions?, _ action: @escaping () -> Void) { entry.run(action) }

    public func schedule(after date: SchedulerTimeType, tolerance: SchedulerTimeType.Stride, options: SchedulerOptions?,
                         _ action: @escaping () -> Void) {
        clock.schedule(on: entry.queue, due: Self.microseconds(date), action)
    }

    public func schedule(after date: SchedulerTimeType, interval: SchedulerTimeType.Stride, tolerance: SchedulerTimeType.Stride,
                         options: SchedulerOptions?, _ action: @escaping () -> Void) -> Cancellable {
        let repeating = RepeatingAction(action)
        let step = UInt64(max(1, interval.magnitude / 1000))
        @Sendable func arm(_ due: UInt64) {
            nonisolated(unsafe) let fire = { if repeating.fire() { arm(due + step) } }
            clock.schedule(on: entry.queue, due: due, fire)
        }
        arm(Self.microseconds(date))
        return repeating
    }

    static func microseconds(_ t: SchedulerTimeType) -> UInt64 { t.dispatchTime.uptimeNanoseconds / 1000 }
}

/// A repeating delayed action that stops once cancelled.
private final class RepeatingAction: Cancellable, Sendable {
    private let cancelled = Atomic(false)
    nonisolated(unsafe) private let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
    func fire() -> Bool {
        guard !cancelled.load(ordering: .acquiring) else { return false }
        action()
        return true
    }
    func cancel() { cancelled.store(true, ordering: .releasing) }
}
