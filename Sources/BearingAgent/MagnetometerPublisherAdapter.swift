import BearingCore
import BearingSensors
import Foundation
@preconcurrency import OpenCombine

/// Implements the magnetometer reader's delegate protocol and forwards each call into a subject. The state
/// publisher replays the current state to each new subscriber.
public final class MagnetometerPublisherAdapter: MagnetometerReaderDelegate, @unchecked Sendable { // subjects are sent to from the reader thread only
    private let sampleSubject = PassthroughSubject<MagneticSample, Never>()
    private let stateSubject: CurrentValueSubject<ConnectionState, Never>
    private let failureSubject = PassthroughSubject<MagnetometerError, Never>()

    public init(initialState: ConnectionState = .disconnected(.stopped)) {
        stateSubject = CurrentValueSubject(initialState)
    }

    public var samples: AnyPublisher<MagneticSample, Never> { sampleSubject.eraseToAnyPublisher() }
    /// Replays the current state on subscription, then every change.
    public var states: AnyPublisher<ConnectionState, Never> { stateSubject.eraseToAnyPublisher() }
    public var failures: AnyPublisher<MagnetometerError, Never> { failureSubject.eraseToAnyPublisher() }
    public var currentState: ConnectionState { stateSubject.value }

    public func magnetometerReader(_ reader: MagnetometerReader, didReceive sample: MagneticSample) { sampleSubject.send(sample) }
    public func magnetometerReader(_ reader: MagnetometerReader, didChangeState state: ConnectionState) { stateSubject.send(state) }
    public func magnetometerReader(_ reader: MagnetometerReader, didFail error: MagnetometerError) { failureSubject.send(error) }
}
