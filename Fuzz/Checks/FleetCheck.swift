// The fleet message fuzz target's checks (Fuzz/Fleet). Filled in by the fleet work.
import BearingCore

public enum FleetCheck {
    public static func failure(_ bytes: [UInt8]) -> String? {
        _ = FleetPipelines.parse(bytes, classes: [.tpv, .att, .sky])
        return nil
    }

    public static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) { FuzzFailure.abort("fuzz-fleet", f) }
    }
}
