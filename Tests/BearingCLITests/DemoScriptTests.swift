import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// `scripts/demo` keeps everything in its own temporary folder: run as root (where the daemon's state would default
/// to /var/lib/bearing), it adds nothing to /var/lib/bearing and leaves nothing in TMPDIR. (No mount namespace to
/// hide /var/lib: the Debian 13 root is a chroot whose / is no mount point, so one cannot be made private there.)
final class DemoScriptTests: XCTestCase {
    /// Every path under `root`, or none when it does not exist.
    static func tree(_ root: String) -> Set<String> {
        guard let e = FileManager.default.enumerator(atPath: root) else { return [] }
        return Set(e.compactMap { $0 as? String })
    }

    func testTheDemoAsRootLeavesNoTrace() throws {
        guard getuid() == 0 else { throw XCTSkip("skipped: the demo's trace in /var/lib/bearing is checked as root only") }
        let dir = temporaryDirectory("demo-trace")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let state = "/var/lib/bearing"
        let existed = FileManager.default.fileExists(atPath: state)
        let before = Self.tree(state)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [repoRoot.appendingPathComponent("scripts/demo").path]
        var env = ProcessInfo.processInfo.environment
        env["TMPDIR"] = tmp.path
        env["BEARING_DEMO_BIN"] = bearingBinary.path
        env["DEMO_COUNT"] = "40"
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let watched = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "the demo failed: \(errors.suffix(2000))")
        XCTAssertTrue(watched.contains("ATT"), "the demo showed no ATT: \(watched.prefix(500))")
        if existed {
            XCTAssertEqual(Self.tree(state).subtracting(before).sorted(), [], "the demo added this to \(state)")
        } else {
            XCTAssertFalse(FileManager.default.fileExists(atPath: state), "the demo made \(state): \(Self.tree(state).sorted())")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), [], "the demo left this in its TMPDIR")
    }
}
