// libFuzzer target for the per-connection request session (ClientSession → ClientRequest → JSONValue).
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build is a
// corpus replayer: `swift run fuzz-session [DIR…]` (default Fuzz/corpus/session) runs every file through
// the same checks. Tests/BearingWireTests/FuzzCorpusTests.swift replays the corpus the same way.
//
// Checks, for any bytes:
//  - nothing crashes;
//  - round trip: every parsed request's `line`, fed to a fresh session, gives back exactly that request;
//  - a line that `ClientRequest.parse` reads as one request with a JSON argument gives exactly that
//    request in a session (a `;` inside a JSON string does not split it);
//  - framing does not depend on read boundaries: the bytes in 2–3 chunks (split points derived from the
//    data) give the same events as in one read.
// The checks themselves are in Fuzz/Checks (FuzzChecks), shared with the tests, as is the libFuzzer entry
// (`FuzzTarget`).
import FuzzChecks

@main
struct FuzzEntry {
    static func main() {
        FuzzTarget.main(name: "fuzz-session", defaultPath: "Fuzz/corpus/session", check: SessionCheck.check)
    }
}
