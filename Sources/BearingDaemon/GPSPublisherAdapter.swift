import BearingModel
import BearingPublishing
import BearingWire
import BearingGPSD
import BearingMarine
import BearingRecording
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
@preconcurrency import OpenCombine

/// Implements the gpsd client's delegate protocol and forwards each call into a subject, so everything
/// downstream is a publisher. Each message libgps read enters the pipeline whole (`PipelineInput`:
/// stamped, recorded as gpsd wrote it), then its values are forwarded. The state publisher replays the current state to each new subscriber.
/// Values gpsd decoded from Bearing's own NMEA door (`echoes`) are dropped here, before anything sees them.
/// Sendable: OpenCombine's subjects lock themselves (the compiler takes them on trust: `@preconcurrency import`).
public final class GPSPublisherAdapter: GPSDClientDelegate, Sendable {
    private let fixSubject = OrderedSubject<GPSFix>()
    private let skySubject = OrderedSubject<SkyView>()
    private let relayedSubject = OrderedSubject<RelayedObject>()
    private let stateSubject: CurrentValueSubject<ConnectionState, Never>
    private let failureSubject = OrderedSubject<GPSDClientError>()

    private let echoes: EchoGuard
    private let input: PipelineInput

    init(input: PipelineInput, initialState: ConnectionState = .stopped, echoes: EchoGuard = .none) {
        stateSubject = CurrentValueSubject(initialState)
        self.echoes = echoes
        self.input = input
    }

    var fixes: AnyPublisher<GPSFix, Never> { fixSubject.eraseToAnyPublisher() }
    var skies: AnyPublisher<SkyView, Never> { skySubject.eraseToAnyPublisher() }
    /// gpsd's ATT, GST, PPS and TOFF objects.
    var relayed: AnyPublisher<RelayedObject, Never> { relayedSubject.eraseToAnyPublisher() }
    /// Replays the current state on subscription, then every change.
    var states: AnyPublisher<ConnectionState, Never> { stateSubject.eraseToAnyPublisher() }
    var failures: AnyPublisher<GPSDClientError, Never> { failureSubject.eraseToAnyPublisher() }
    public var currentState: ConnectionState { stateSubject.value }

    public func gpsdClient(_ client: GPSDClient, didReceive fix: GPSFix) {
        if !echoes.isEcho(device: fix.device) { fixSubject.send(fix) }
    }
    public func gpsdClient(_ client: GPSDClient, didReceive sky: SkyView) {
        if !echoes.isEcho(device: sky.device) { skySubject.send(sky) }
    }
    public func gpsdClient(_ client: GPSDClient, didReceive relayed: RelayedObject) {
        if !echoes.isEcho(device: relayed.device) { relayedSubject.send(relayed) }
    }
    public func gpsdClient(_ client: GPSDClient, didChangeState state: ConnectionState) {
        input.enterState(.gpsd, state) { stateSubject.send(state) }
    }
    public func gpsdClient(_ client: GPSDClient, didFail error: GPSDClientError) {
        input.enter({ .gpsdFailure(error.message) }) { failureSubject.send(error) }
    }
    public func gpsdClient(_ client: GPSDClient, didRead message: UnsafeBufferPointer<UInt8>, deliver: () -> Void) {
        input.enter({ .gpsd(Array(message)) }, deliver)
    }
}
