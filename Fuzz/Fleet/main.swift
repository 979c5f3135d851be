// libFuzzer target for the fleet message parser (FleetPipelines.parse): the retained message every device
// on a broker reads from `mqtt.fleet_topic`.
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build replays
// the corpus: `swift run fuzz-fleet [DIR…]` (default Fuzz/corpus/fleet). The checks are FleetCheck's
// (Fuzz/Checks), which Tests/BearingMQTTTests/FleetFuzzCorpusTests.swift replays too.
import FuzzChecks

@main
struct FuzzEntry {
    static func main() {
        FuzzTarget.main(name: "fuzz-fleet", defaultPath: "Fuzz/corpus/fleet", check: FleetCheck.check)
    }
}
