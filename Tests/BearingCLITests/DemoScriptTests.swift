import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// `scripts/demo` keeps everything in its own temporary folder: run as root (the daemon's state would default to
/// /var/lib/bearing), it leaves nothing in /var/lib and nothing in TMPDIR. The demo runs in a mount namespace of
/// its own with an empty tmpfs on /var/lib, so what it writes there is seen and never reaches the machine's.
final class DemoScriptTests: XCTestCase {
    func testTheDemoAsRootLeavesNoTrace() throws {
        guard getuid() == 0 else { throw XCTSkip("skipped: the demo's trace in /var/lib is checked as root only") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { throw XCTSkip("skipped: no unshare (util-linux)") }
        let dir = temporaryDirectory("demo-trace")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let script = """
            set -u
            mount --make-rprivate / && mount -t tmpfs tmpfs /var/lib || exit 90
            TMPDIR=\(tmp.path) BEARING_DEMO_BIN=\(bearingBinary.path) DEMO_COUNT=40 \(repoRoot.path)/scripts/demo >\(dir.path)/out 2>\(dir.path)/err
            echo "rc $?"
            find /var/lib -mindepth 1
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        p.arguments = ["-m", "bash", "-c", script]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let lines = text.split(separator: "\n").map(String.init)
        let err = (try? String(contentsOf: dir.appendingPathComponent("err"), encoding: .utf8)) ?? ""
        XCTAssertEqual(lines.first, "rc 0", "the demo failed: \(err.suffix(2000))")
        let watched = ((try? String(contentsOf: dir.appendingPathComponent("out"), encoding: .utf8)) ?? "").split(separator: "\n")
        XCTAssertTrue(watched.contains { $0.contains("ATT") }, "the demo showed no ATT: \(watched.prefix(5))")
        XCTAssertEqual(Array(lines.dropFirst()), [], "the demo left this in /var/lib")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), [], "the demo left this in its TMPDIR")
    }
}
