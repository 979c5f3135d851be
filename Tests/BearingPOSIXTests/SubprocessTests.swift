import BearingPOSIX
import XCTest

/// External commands, run once through posix_spawnp: how they end, what they write, limits and timeouts.
final class SubprocessTests: XCTestCase {
    func testExitStatusOutputsAndSignals() {
        let ok = Subprocess.run(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout: 10, limit: 1024)
        XCTAssertEqual(ok.end, .exited(3))
        XCTAssertEqual(String(decoding: ok.stdout, as: UTF8.self), "out\n")
        XCTAssertEqual(ok.errorText, "err\n")
        XCTAssertFalse(ok.succeeded)
        XCTAssertEqual(ok.summary, "exit status 3")
        let killed = Subprocess.run(["sh", "-c", "kill -TERM $$"], timeout: 10, limit: 1024)
        XCTAssertEqual(killed.end, .signaled(SIGTERM))
        XCTAssertEqual(killed.summary, "killed by signal 15")
        XCTAssertTrue(Subprocess.run(["true"], timeout: 10, limit: 16).succeeded)
    }

    func testTheLimitCutsTheOutputAndATimeoutKillsTheGroup() {
        let long = Subprocess.run(["sh", "-c", "head -c 100000 /dev/zero"], timeout: 10, limit: 1000)
        XCTAssertEqual(long.stdout.count, 1000)
        XCTAssertTrue(long.truncated)
        XCTAssertEqual(long.end, .exited(0), "read to its end, the rest dropped")
        let start = Syscall.monotonicSeconds()
        let slow = Subprocess.run(["sh", "-c", "sleep 30 & sleep 30"], timeout: 0.3, limit: 1000)
        XCTAssertEqual(slow.end, .timedOut)
        XCTAssertEqual(slow.summary, "timed out, killed")
        XCTAssertLessThan(Syscall.monotonicSeconds() - start, 10, "the group was killed, its child's pipe end with it")
    }

    func testAMissingProgramIsNamedAsMissing() {
        let r = Subprocess.run(["bearing-no-such-program"], timeout: 5, limit: 16)
        XCTAssertEqual(r.end, .missing)
        XCTAssertEqual(r.summary, "not installed (not found in PATH)")
    }
}
