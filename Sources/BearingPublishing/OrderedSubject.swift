import OpenCombine
import Synchronization

/// A subject that gives each value to its subscribers in the order they subscribed. OpenCombine's
/// `PassthroughSubject` keeps them in a set (by address), so the order in which one value reaches the
/// runs on an input — and the order of their delayed actions — would differ from run to run, and a replay
/// could not give the same bytes. Used on the pipeline queue only; values beyond a subscriber's demand are
/// dropped for it, as `PassthroughSubject` does.
public final class OrderedSubject<Output>: Publisher, Sendable {
    public typealias Failure = Never

    @usableFromInline let subscriptions = Mutex<[Link]>([])

    public init() {}

    public func receive<Downstream: Subscriber>(subscriber: Downstream) where Downstream.Input == Output, Downstream.Failure == Never {
        let link = Link(AnySubscriber(subscriber)) { [weak self] link in
            self?.subscriptions.withLock { $0.removeAll { $0 === link } }
        }
        subscriptions.withLock { $0.append(link) }
        subscriber.receive(subscription: link)
    }

    /// Inlinable, so that a caller in another module (a sensor's source, in the daemon) runs it specialized for
    /// its value type: unspecialized, every value looked up the metadata of `[Link]` and `Link` (callgrind: ~800
    /// instructions a value).
    @inlinable
    public func send(_ value: Output) {
        for link in subscriptions.withLock({ $0 }) { link.deliver(value) }
    }

    /// One subscriber's subscription: its demand, and how it leaves.
    @usableFromInline
    final class Link: Subscription, Sendable {
        /// Only ever called on the pipeline queue.
        nonisolated(unsafe) private let downstream: AnySubscriber<Output, Never>
        private let demand = Mutex(Subscribers.Demand.none)
        nonisolated(unsafe) private let leave: (Link) -> Void
        private let left = Atomic(false)

        init(_ downstream: AnySubscriber<Output, Never>, leave: @escaping (Link) -> Void) {
            self.downstream = downstream
            self.leave = leave
        }

        @usableFromInline
        func deliver(_ value: Output) {
            guard !left.load(ordering: .acquiring) else { return }
            let ok = demand.withLock { d -> Bool in
                guard d > .none else { return false }
                if d != .unlimited { d -= 1 }
                return true
            }
            guard ok else { return }
            let more = downstream.receive(value)
            if more > .none { demand.withLock { $0 += more } }
        }

        @usableFromInline
        func request(_ more: Subscribers.Demand) {
            demand.withLock { $0 += more }
        }

        @usableFromInline
        func cancel() {
            guard !left.exchange(true, ordering: .acquiringAndReleasing) else { return }
            leave(self)
        }
    }
}
