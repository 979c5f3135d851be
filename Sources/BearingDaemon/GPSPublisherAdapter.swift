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

/// Implements the gpsd client's delegate protocol and forwards each call into the hub's sources
/// (`PipelineSource`, `PipelineState`), which the stages and chains subscribe to. Each message libgps read enters the pipeline whole (`PipelineInput`:
/// stamped, recorded as gpsd wrote it), then its values are forwarded. `states` gives the current state to each new subscriber.
/// Values gpsd decoded from Bearing's own NMEA door (`echoes`) are dropped here, before anything sees them.
public final class GPSPublisherAdapter: GPSDClientDelegate, Sendable {
    let fixes = PipelineSource<GPSFix>()
    let skies = PipelineSource<SkyView>()
    /// gpsd's ATT, GST, PPS and TOFF objects.
    let relayed = PipelineSource<RelayedObject>()
    /// Gives the current state on subscription, then every change.
    let states: PipelineState<ConnectionState>
    let failures = PipelineSource<GPSDClientError>()

    private let echoes: EchoGuard
    private let input: PipelineInput

    init(input: PipelineInput, initialState: ConnectionState = .stopped, echoes: EchoGuard = .none) {
        states = PipelineState(initialState)
        self.echoes = echoes
        self.input = input
    }

    public var currentState: ConnectionState { states.value }

    public func gpsdClient(_ client: GPSDClient, didReceive fix: GPSFix) {
        if !echoes.isEcho(device: fix.device) { fixes.send(fix) }
    }
    public func gpsdClient(_ client: GPSDClient, didReceive sky: SkyView) {
        if !echoes.isEcho(device: sky.device) { skies.send(sky) }
    }
    public func gpsdClient(_ client: GPSDClient, didReceive relayed: RelayedObject) {
        if !echoes.isEcho(device: relayed.device) { self.relayed.send(relayed) }
    }
    public func gpsdClient(_ client: GPSDClient, didChangeState state: ConnectionState) {
        input.enterState(.gpsd, state) { states.send(state) }
    }
    public func gpsdClient(_ client: GPSDClient, didFail error: GPSDClientError) {
        input.enter({ .gpsdFailure(error.message) }) { failures.send(error) }
    }
    public func gpsdClient(_ client: GPSDClient, didRead message: UnsafeBufferPointer<UInt8>, deliver: () -> Void) {
        input.enterMessage({ .gpsd(Array(message)) }, deliver)
    }
}
