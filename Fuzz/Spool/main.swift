// libFuzzer target for the MQTT spool's line reader: a segment's bytes as they may be found on a card after a
// crash, a power cut or a hand edit.
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build replays
// the corpus: `swift run fuzz-spool [DIR…]` (default Fuzz/corpus/spool). The checks are SpoolCheck's
// (Fuzz/Checks), which Tests/BearingMQTTTests/SpoolFuzzCorpusTests.swift replays too.
import FuzzChecks

@main
struct FuzzEntry {
    static func main() {
        FuzzTarget.main(name: "fuzz-spool", defaultPath: "Fuzz/corpus/spool", check: SpoolCheck.check)
    }
}
