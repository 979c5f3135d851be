import BearingWire
import BearingPublishing
import BearingLog
import Dispatch

extension LineDoor {
    /// The Signal K door: one delta per attitude its chain passes (heading, variation, attitude, rate of
    /// turn) and per fix (position, course and speed over ground), one per line over TCP and one per
    /// datagram over UDP — the form a Signal K server's TCP and UDP inputs read. Signal K's own NMEA 0183
    /// parser does not read XDR, so attitude reaches it this way.
    public static func signalK(_ config: SignalKDoorConfig, core: PublishingCore, logger: Logger) throws -> LineDoor {
        try LineDoor(name: "Signal K door", section: "signalk", outputs: config.outputs, core: core, logger: logger,
                     feed: signalKFeed(config))
    }

    /// The Signal K door's path from hub values to deltas, without its sockets: what the door runs, and what
    /// the regression corpus replays recordings through.
    public static func signalKFeed(_ config: SignalKDoorConfig) -> Feed {
        { hub, emit in
            let source = SignalKSource(label: config.source)
            return [
                hub.subscribe(StreamKey(.att, .compass), through: config.attitude) { report in
                    if case .attitude(let a) = report.payload { emit([SignalKDelta.attitude(a, source: source)]) }
                },
                hub.subscribe(StreamKey(.tpv, .gpsd), through: config.fix) { report in
                    if let f = report.fix, let delta = SignalKDelta.fix(f, source: source) { emit([delta]) }
                },
            ]
        }
    }
}
