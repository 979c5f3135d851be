import BearingModel
import BearingWire
import OpenCombine

// The two operators every default chain of the daemon runs on each value (ATT's `smooth` then `throttle`), as
// publishers of our own, concrete on `Report`. OpenCombine's `throttle` and the `scan` + `compactMap` that
// `smooth` was made of are generic code in another module: not specialized for `Report`, they looked up
// `Optional<Output>`, `Completion` and their state's metadata on every value (callgrind: ~6,600 instructions
// per inertial sample of the daemon's 9-axis path, `bench/compass-cost`). These do what those did, value for
// value and timer for timer (`PipelineTests`, and the black box's exact replays). Like every operator of a
// chain, they run on the pipeline's one serial context (or a test's virtual-time scheduler): no locks.

/// `throttle(for:scheduler:latest:)` as OpenCombine 0.14 does it (Publishers.Throttle): the first value of a
/// window is scheduled at once (on the scheduler, never synchronously), later ones at the end of the window
/// that began with the last emission; with `latest`, the newest value when the window ends, else the first.
struct ReportThrottle<S: Scheduler>: Publisher {
    typealias Output = Report
    typealias Failure = Never

    let upstream: AnyPublisher<Report, Never>
    let interval: S.SchedulerTimeType.Stride
    let scheduler: S
    let latest: Bool

    func receive<Downstream: Subscriber>(subscriber: Downstream) where Downstream.Input == Report, Downstream.Failure == Never {
        upstream.subscribe(Inner(interval: interval, scheduler: scheduler, latest: latest, downstream: AnySubscriber(subscriber)))
    }

    final class Inner: Subscriber, Subscription {
        typealias Input = Report
        typealias Failure = Never

        // Plain stored state, no optionals of the scheduler's types: this is the generic code the chain runs
        // (through `AnyPublisher`, unspecialized), so each `Optional<S.SchedulerTimeType>` or existential copy
        // would be a metadata lookup per value.
        private let interval: S.SchedulerTimeType.Stride
        private let scheduler: S
        private let latest: Bool
        private var downstream: AnySubscriber<Report, Never>?
        private var upstream: Subscription?
        private var subscribed = false
        private var terminal = false
        private var emitted = false
        private var lastEmissionTime: S.SchedulerTimeType
        private var pendingInput: Report?
        private var pendingCompletion = false
        private var demand = Subscribers.Demand.none

        init(interval: S.SchedulerTimeType.Stride, scheduler: S, latest: Bool, downstream: AnySubscriber<Report, Never>) {
            self.interval = interval
            self.scheduler = scheduler
            self.latest = latest
            self.downstream = downstream
            lastEmissionTime = scheduler.now
        }

        func receive(subscription: Subscription) {
            guard !subscribed, !terminal, let downstream else {
                subscription.cancel()
                return
            }
            upstream = subscription
            subscribed = true
            subscription.request(.unlimited)
            downstream.receive(subscription: self)
        }

        func receive(_ input: Report) -> Subscribers.Demand {
            guard subscribed, !pendingCompletion, !terminal, demand > .none else { return .none }
            // A value already scheduled: the newest replaces it (`latest`), or it stays.
            if pendingInput != nil {
                if latest { pendingInput = input }
                return .none
            }
            let now = scheduler.now
            let emission = emitted ? Swift.max(now, lastEmissionTime.advanced(by: interval)) : now
            demand -= 1
            pendingInput = input
            if emission == now {
                scheduler.schedule { [weak self] in self?.emit() }
            } else {
                scheduler.schedule(after: emission) { [weak self] in self?.emit() }
            }
            return .none
        }

        func receive(completion: Subscribers.Completion<Never>) {
            guard subscribed, !pendingCompletion, !terminal else { return }
            let scheduled = pendingInput != nil
            pendingCompletion = true
            if !scheduled { scheduler.schedule { [weak self] in self?.emit() } }
        }

        private func emit() {
            guard !terminal, let downstream else { return }
            let input = pendingInput
            let completion = pendingCompletion
            if input != nil, !completion {
                lastEmissionTime = scheduler.now
                emitted = true
            }
            pendingInput = nil
            if completion {
                pendingCompletion = false
                terminal = true
                self.downstream = nil
                upstream = nil
            }
            let more = input.map { downstream.receive($0) } ?? .none
            if completion { downstream.receive(completion: .finished) }
            if more > .none { demand += more }
        }

        func request(_ more: Subscribers.Demand) {
            guard more > .none, subscribed, !terminal else { return }
            demand += more
        }

        func cancel() {
            guard !terminal else { return }
            terminal = true
            let subscription = upstream
            upstream = nil
            downstream = nil
            pendingInput = nil
            subscription?.cancel()
        }
    }
}

/// `smooth`: an attitude without a quaternion (the magnetometer alone) becomes the circular mean of the last `n`
/// headings and the mean field (`AttitudeSmoother`), each value at once; a fused attitude (with a quaternion: the
/// attitude filter is its own low-pass) and every other value pass unchanged. Was `scan` + `compactMap`.
struct ReportSmooth: Publisher {
    typealias Output = Report
    typealias Failure = Never

    let upstream: AnyPublisher<Report, Never>
    let window: Int

    func receive<Downstream: Subscriber>(subscriber: Downstream) where Downstream.Input == Report, Downstream.Failure == Never {
        upstream.subscribe(Inner(window: window, downstream: AnySubscriber(subscriber)))
    }

    final class Inner: Subscriber, Subscription {
        typealias Input = Report
        typealias Failure = Never

        private var smoother: AttitudeSmoother
        private var downstream: AnySubscriber<Report, Never>?
        private var upstream: Subscription?

        init(window: Int, downstream: AnySubscriber<Report, Never>) {
            smoother = AttitudeSmoother(window: window)
            self.downstream = downstream
        }

        func receive(subscription: Subscription) {
            guard upstream == nil, let downstream else {
                subscription.cancel()
                return
            }
            upstream = subscription
            downstream.receive(subscription: self)
        }

        func receive(_ input: Report) -> Subscribers.Demand {
            guard let downstream else { return .none }
            guard case .attitude(let a) = input.payload, a.quaternion == nil else { return downstream.receive(input) }
            smoother.add(a)
            guard let s = smoother.smoothed else { return .max(1) }
            return downstream.receive(Report(.attitude(s), keep: input.keep))
        }

        func receive(completion: Subscribers.Completion<Never>) {
            let d = downstream
            downstream = nil
            upstream = nil
            d?.receive(completion: completion)
        }

        func request(_ demand: Subscribers.Demand) { upstream?.request(demand) }

        func cancel() {
            let u = upstream
            upstream = nil
            downstream = nil
            u?.cancel()
        }
    }
}
