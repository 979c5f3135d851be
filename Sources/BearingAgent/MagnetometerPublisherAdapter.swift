import BearingCore
import BearingSensors
import Foundation
@preconcurrency import OpenCombine

/// A sensor reader's reports as subjects: samples, link state (replayed to each new subscriber) and
/// failures. The reader adapters below forward their delegate calls into it.
public class SensorSubjects<Sample>: @unchecked Sendable { // subjects are sent to from the reader thread only
    private let sampleSubject = PassthroughSubject<Sample, Never>()
    private let stateSubject: CurrentValueSubject<ConnectionState, Never>
    private let failureSubject = PassthroughSubject<SensorError, Never>()

    public init(initialState: ConnectionState = .disconnected(.stopped)) {
        stateSubject = CurrentValueSubject(initialState)
    }

    public var samples: AnyPublisher<Sample, Never> { sampleSubject.eraseToAnyPublisher() }
    /// Replays the current state on subscription, then every change.
    public var states: AnyPublisher<ConnectionState, Never> { stateSubject.eraseToAnyPublisher() }
    public var failures: AnyPublisher<SensorError, Never> { failureSubject.eraseToAnyPublisher() }
    public var currentState: ConnectionState { stateSubject.value }

    func send(_ sample: Sample) { sampleSubject.send(sample) }
    func send(_ state: ConnectionState) { stateSubject.send(state) }
    func send(_ failure: SensorError) { failureSubject.send(failure) }
}

/// Implements the magnetometer reader's delegate protocol and forwards each call into a subject.
public final class MagnetometerPublisherAdapter: SensorSubjects<MagneticSample>, MagnetometerReaderDelegate, @unchecked Sendable {
    public func magnetometerReader(_ reader: MagnetometerReader, didReceive sample: MagneticSample) { send(sample) }
    public func magnetometerReader(_ reader: MagnetometerReader, didChangeState state: ConnectionState) { send(state) }
    public func magnetometerReader(_ reader: MagnetometerReader, didFail error: MagnetometerError) { send(error) }
}

/// Implements the inertial reader's delegate protocol and forwards each call into a subject.
public final class InertialPublisherAdapter: SensorSubjects<InertialSample>, InertialReaderDelegate, @unchecked Sendable {
    public func inertialReader(_ reader: InertialReader, didReceive sample: InertialSample) { send(sample) }
    public func inertialReader(_ reader: InertialReader, didChangeState state: ConnectionState) { send(state) }
    public func inertialReader(_ reader: InertialReader, didFail error: SensorError) { send(error) }
}
