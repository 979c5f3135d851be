@preconcurrency import OpenCombine

/// A source's values on their way into the pipeline: the adapter (the gpsd client's or a sensor reader's
/// delegate) sends each one from inside `PipelineInput`'s entry, on the pipeline queue, and the stages and
/// the hub subscribe with a callback. Behind it is the adapter's subject (`OrderedSubject`: subscribers get
/// each value in the order they subscribed, so a replay gives the same bytes); no OpenCombine type leaves
/// the hub.
/// Sendable: OpenCombine's subjects lock themselves (the compiler takes them on trust: `@preconcurrency import`).
public final class PipelineSource<Value>: Sendable {
    private let subject = OrderedSubject<Value>()

    public init() {}

    /// On the pipeline queue (inside the entry's `run`).
    public func send(_ value: Value) { subject.send(value) }

    /// `receive` gets each value on the pipeline queue until the subscription is cancelled or released.
    public func subscribe(on entry: PipelineEntry, _ receive: @escaping (Value) -> Void) -> HubSubscription {
        HubSubscription(subject.receive(on: entry).sink(receiveValue: receive))
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
