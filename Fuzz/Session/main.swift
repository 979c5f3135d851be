// libFuzzer target for the per-connection request session (ClientSession → ClientRequest → JSONValue).
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build is a
// corpus replayer: `swift run fuzz-session [DIR…]` (default Fuzz/corpus/session) runs every file through
// the same checks. Tests/BearingCoreTests/FuzzCorpusTests.swift replays the corpus the same way.
//
// Checks, for any bytes:
//  - nothing crashes;
//  - round trip: every parsed request's `line`, fed to a fresh session, gives back exactly that request;
//  - a line that `ClientRequest.parse` reads as one request with a JSON argument gives exactly that
//    request in a session (a `;` inside a JSON string does not split it);
//  - framing does not depend on read boundaries: the bytes in 2–3 chunks (split points derived from the
//    data) give the same events as in one read.
// The checks themselves are in Fuzz/Checks (FuzzChecks), shared with the tests.
import FuzzChecks
#if canImport(Glibc)
import Glibc
#endif

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    SessionCheck.check(Array(UnsafeBufferPointer(start: data, count: size)))
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
            guard let data else { SessionCheck.check([]); return 0 }
            return fuzz(data, size)
        })
    }
}
#else
@main
struct Replay {
    static func main() {
        FuzzReplay.main(name: "fuzz-session", defaultPath: "Fuzz/corpus/session", check: SessionCheck.check)
    }
}
#endif
