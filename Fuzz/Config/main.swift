// libFuzzer target for the config reader (`AgentConfig.parse`, YAML through libyaml).
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build is a
// corpus replayer: `swift run fuzz-config [DIR…]` (default Fuzz/corpus/config) runs every file through
// the same check. Tests/BearingDaemonTests/ConfigCorpusTests.swift replays the corpus the same way.
//
// Check, for any bytes (read as UTF-8, bad sequences replaced): parsing returns a config or throws a
// ConfigError with a message; it never crashes.
// The checks themselves are in Fuzz/Checks (FuzzChecks), shared with the tests, as is the libFuzzer entry
// (`FuzzTarget`).
import FuzzChecks
import FuzzConfigChecks

@main
struct FuzzEntry {
    static func main() {
        FuzzTarget.main(name: "fuzz-config", defaultPath: "Fuzz/corpus/config", check: ConfigCheck.check)
    }
}
