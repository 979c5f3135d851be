import OpenCombine

extension Publisher {
    /// `scan` for a state too large to copy: `step` mutates the one state each subscription owns, in place,
    /// and returns what to emit for the element (nil: nothing, as `compactMap`). `scan` hands its closure the
    /// state and stores what it returns, two copies of the whole state per element; for the attitude
    /// fusion (a kilobyte at the gyroscope's rate) that was a tenth of the cost of a fused ATT line.
    public func scanInPlace<State, T>(_ initial: State, _ step: @escaping (inout State, Output) -> T?) -> Publishers.ScanInPlace<Self, State, T> {
        Publishers.ScanInPlace(upstream: self, initial: initial, step: step)
    }
}

extension Publishers {
    /// See `Publisher.scanInPlace(_:_:)`.
    public struct ScanInPlace<Upstream: Publisher, State, Output>: Publisher {
        public typealias Failure = Upstream.Failure

        public let upstream: Upstream
        public let initial: State
        public let step: (inout State, Upstream.Output) -> Output?

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            upstream.subscribe(Inner(downstream: subscriber, state: initial, step: step))
        }

        /// Passes the upstream subscription through (demand goes straight upstream) and steps the state with
        /// each element. Elements arrive one at a time (the Subscriber contract), so the state needs no lock.
        private final class Inner<Downstream: Subscriber>: Subscriber
        where Downstream.Input == Output, Downstream.Failure == Failure {
            typealias Input = Upstream.Output

            private let downstream: Downstream
            private var state: State
            private let step: (inout State, Upstream.Output) -> Output?

            init(downstream: Downstream, state: State, step: @escaping (inout State, Upstream.Output) -> Output?) {
                self.downstream = downstream
                self.state = state
                self.step = step
            }

            func receive(subscription: Subscription) {
                downstream.receive(subscription: subscription)
            }

            func receive(_ input: Upstream.Output) -> Subscribers.Demand {
                guard let output = step(&state, input) else { return .max(1) }  // the element used a demand that nothing answered
                return downstream.receive(output)
            }

            func receive(completion: Subscribers.Completion<Failure>) {
                downstream.receive(completion: completion)
            }
        }
    }
}
