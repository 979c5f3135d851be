import BearingModel
import BearingAttitude
import BearingWire
import BearingPublishing
import BearingLog
import Dispatch

extension LineDoor {
    /// The NMEA 0183 door: each sentence from its own chain run over the compass's ATT (RMC over gpsd's
    /// TPV); sentences whose chains are equal share one run, so they leave together and describe one instant.
    /// No attitude (the compass stopped) sends nothing: sentences are made only from values that arrive.
    public static func nmea0183(_ config: NMEA0183DoorConfig, core: PublishingCore, logger: Logger) throws -> LineDoor {
        try LineDoor(name: "NMEA 0183 door", section: "nmea0183", outputs: config.outputs, core: core, logger: logger,
                     feed: nmea0183Feed(config))
    }

    /// The NMEA 0183 door's path from hub values to sentences, without its sockets: what the door runs, and
    /// what the regression corpus replays recordings through.
    public static func nmea0183Feed(_ config: NMEA0183DoorConfig) -> Feed {
        { hub, emit in
            let encoder = NMEA0183Encoder(talker: config.talker)
            var runs: [HubSubscription] = []
            for group in NMEA0183DoorConfig.groups(config.sentences) {
                if group.types == [.rmc] {
                    // The magnetic variation RMC carries: WMM at the fix, recomputed when the fix has moved ~1 km.
                    var declination = DeclinationState()
                    runs.append(hub.subscribe(StreamKey(.tpv, .gpsd), through: group.chain) { report in
                        guard let fix = report.fix else { return }
                        declination = declination.updated(with: fix, model: .wmm2025)
                        if let s = encoder.rmc(fix, variation: fix.hasPosition ? declination.current?.value : nil) { emit([s]) }
                    })
                } else {
                    runs.append(hub.subscribe(StreamKey(.att, .compass), through: group.chain) { report in
                        guard case .attitude(let a) = report.payload else { return }
                        emit(group.types.compactMap { encoder.sentence($0, a) })
                    })
                }
            }
            return runs
        }
    }
}

extension NMEA0183DoorConfig {
    /// Sentences grouped by equal chains, in the order of `NMEA0183SentenceType.allCases`; RMC (from TPV)
    /// always alone.
    static func groups(_ sentences: [NMEA0183SentenceType: [OperatorSpec]]) -> [(chain: [OperatorSpec], types: [NMEA0183SentenceType])] {
        var groups: [(chain: [OperatorSpec], types: [NMEA0183SentenceType])] = []
        for type in NMEA0183SentenceType.allCases {
            guard let chain = sentences[type] else { continue }
            if type != .rmc, let i = groups.firstIndex(where: { $0.chain == chain && $0.types != [.rmc] }) {
                groups[i].types.append(type)
            } else {
                groups.append((chain, [type]))
            }
        }
        return groups
    }
}

extension NMEA0183Encoder {
    /// The sentence of `type` for an attitude (nil when it has nothing to say, or for RMC).
    func sentence(_ type: NMEA0183SentenceType, _ a: Attitude) -> String? {
        switch type {
        case .hdt: return hdt(a)
        case .hdm: return hdm(a)
        case .hdg: return hdg(a)
        case .rot: return rot(a)
        case .xdr: return xdr(a)
        case .rmc: return nil
        }
    }
}
