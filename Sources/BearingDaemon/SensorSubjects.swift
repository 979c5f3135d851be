import BearingModel
import BearingSensors
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
@preconcurrency import OpenCombine

/// A sensor reader's reports as subjects: samples, link state (replayed to each new subscriber) and
/// failures. It is the reader's delegate: each call is forwarded into its subject.
/// Sendable: OpenCombine's subjects lock themselves (the compiler takes them on trust: `@preconcurrency import`).
public final class SensorSubjects<Sample>: SensorReaderDelegate, Sendable {
    private let sampleSubject = PassthroughSubject<Sample, Never>()
    private let stateSubject: CurrentValueSubject<ConnectionState, Never>
    private let failureSubject = PassthroughSubject<SensorError, Never>()

    public init(initialState: ConnectionState = .stopped) {
        stateSubject = CurrentValueSubject(initialState)
    }

    public var samples: AnyPublisher<Sample, Never> { sampleSubject.eraseToAnyPublisher() }
    /// Replays the current state on subscription, then every change.
    public var states: AnyPublisher<ConnectionState, Never> { stateSubject.eraseToAnyPublisher() }
    public var failures: AnyPublisher<SensorError, Never> { failureSubject.eraseToAnyPublisher() }
    public var currentState: ConnectionState { stateSubject.value }

    public func sensorReader(didReceive sample: Sample) { sampleSubject.send(sample) }
    public func sensorReader(didChangeState state: ConnectionState) { stateSubject.send(state) }
    public func sensorReader(didFail error: SensorError) { failureSubject.send(error) }
}
