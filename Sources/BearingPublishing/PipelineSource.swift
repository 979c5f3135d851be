@preconcurrency import OpenCombine

/// A source's values on their way into the pipeline: the adapter (the gpsd client's or a sensor reader's
/// delegate) sends each one from inside `PipelineInput`'s entry, on the pipeline queue, and the stages and
/// the hub subscribe with a callback. Behind it is the adapter's subject (`OrderedSubject`: subscribers get
/// each value in the order they subscribed, so a replay gives the same bytes); no OpenCombine type leaves
/// the hub.
/// Sendable: OpenCombine's subjects lock themselves (the compiler takes them on trust: `@preconcurrency import`).
public final class PipelineSource<Value>: Sendable {
    @usableFromInline let subject = OrderedSubject<Value>()

    public init() {}

    /// On the pipeline queue (inside the entry's `run`).
    @inlinable public func send(_ value: Value) { subject.send(value) }

    /// `receive` gets each value on the pipeline queue until the subscription is cancelled or released.
    public func subscribe(on entry: PipelineEntry, _ receive: @escaping (Value) -> Void) -> HubSubscription {
        // What `receive(on: entry).sink(receiveValue:)` did, in one subscriber of our own: OpenCombine's ReceiveOn
        // and Sink, generic code in another module, took two locks and looked up their state's metadata per value.
        let sink = EntrySink(entry: entry, receive: receive)
        subject.subscribe(sink)
        return HubSubscription(AnyCancellable(sink))
    }
}

/// Takes every value (unlimited demand) and hands it to `receive` inside the pipeline entry's `run` (at once when
/// on the pipeline queue already, as a source's values are) until cancelled.
final class EntrySink<Value>: Subscriber, Cancellable {
    typealias Input = Value
    typealias Failure = Never

    private let entry: PipelineEntry
    private var receiveValue: ((Value) -> Void)?
    private var subscription: Subscription?

    init(entry: PipelineEntry, receive: @escaping (Value) -> Void) {
        self.entry = entry
        receiveValue = receive
    }

    func receive(subscription: Subscription) {
        guard self.subscription == nil, receiveValue != nil else {
            subscription.cancel()
            return
        }
        self.subscription = subscription
        subscription.request(.unlimited)
    }

    func receive(_ input: Value) -> Subscribers.Demand {
        if let receiveValue { entry.run { receiveValue(input) } }
        return .none
    }

    func receive(completion: Subscribers.Completion<Never>) {
        receiveValue = nil
        subscription = nil
    }

    func cancel() {
        let s = subscription
        subscription = nil
        receiveValue = nil
        s?.cancel()
    }
}

/// A source's state (its link): the value now, given to each new subscriber when it subscribes, then each
/// change; a value equal to the one before is not given again.
/// Sendable: OpenCombine's subjects lock themselves (the compiler takes them on trust: `@preconcurrency import`).
public final class PipelineState<Value: Equatable>: Sendable {
    private let subject: CurrentValueSubject<Value, Never>

    public init(_ initial: Value) { subject = CurrentValueSubject(initial) }

    public var value: Value { subject.value }

    public func send(_ value: Value) { subject.send(value) }

    public func subscribe(on entry: PipelineEntry, _ receive: @escaping (Value) -> Void) -> HubSubscription {
        HubSubscription(subject.receive(on: entry).removeDuplicates().sink(receiveValue: receive))
    }
}
