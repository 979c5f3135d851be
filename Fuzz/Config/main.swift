// libFuzzer target for the config reader (`AgentConfig.parse`, YAML through Yams).
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build is a
// corpus replayer: `swift run fuzz-config [DIR…]` (default Fuzz/corpus/config) runs every file through
// the same check. Tests/BearingAgentTests/ConfigCorpusTests.swift replays the corpus the same way.
//
// Check, for any bytes (read as UTF-8, bad sequences replaced): parsing returns a config or throws a
// ConfigError with a message; it never crashes.
// The checks themselves are in Fuzz/Checks (FuzzChecks), shared with the tests.
import FuzzChecks
import FuzzConfigChecks
#if canImport(Glibc)
import Glibc
#endif

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ConfigCheck.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`
/// (pointer and integer arguments only, passed the same way by the Swift and C conventions).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// SwiftPM links every executable with `--defsym main=<module>_main`, so libFuzzer's own `main` is not
/// the entry point: this one hands the command line to libFuzzer's driver instead.
@main
struct FuzzerEntry {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            guard let data else { ConfigCheck.check([]); return 0 }
            return fuzz(data, size)
        })
    }
}
#else
@main
struct Replay {
    static func main() {
        FuzzReplay.main(name: "fuzz-config", defaultPath: "Fuzz/corpus/config", check: ConfigCheck.check)
    }
}
#endif
