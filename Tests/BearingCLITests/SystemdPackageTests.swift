import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// The Debian package that `scripts/package --fault-injection` built (scripts/test builds it before the tests),
/// checked on this machine (lintian, contents) and installed under a real systemd in a qemu VM
/// (scripts/vm-systemd/suite.sh).
final class SystemdPackageTests: XCTestCase {
    /// BUILD/package/fault-injection, BUILD being $BEARING_BUILD_DIR (scripts/trixie's .build-trixie) or .build.
    static let packageDirectory = (ProcessInfo.processInfo.environment["BEARING_BUILD_DIR"].map { URL(fileURLWithPath: $0) }
        ?? repoRoot.appendingPathComponent(".build")).appendingPathComponent("package/fault-injection")

    /// This machine's package, not another architecture's from the same directory
    /// (`scripts/package --arch arm64 --fault-injection` writes there too).
    func package() throws -> URL {
        let arch = try run("/usr/bin/dpkg", ["--print-architecture"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let debs = (try? FileManager.default.contentsOfDirectory(atPath: Self.packageDirectory.path))?
            .filter { $0.hasPrefix("bearing_") && $0.hasSuffix("_\(arch).deb") }.sorted() ?? []
        guard let name = debs.last else {
            throw XCTSkip("SKIPPED: no \(arch) package in \(Self.packageDirectory.path); run scripts/package --fault-injection (scripts/test does)")
        }
        return Self.packageDirectory.appendingPathComponent(name)
    }

    func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        if !environment.isEmpty {
            p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    /// The unit as the repository has it scores ≤ 1.5 offline (the VM suite checks it inside a booted systemd).
    func testTheUnitsExposureIsAtMostOnePointFive() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            throw XCTSkip("SKIPPED: systemd-analyze is not installed (apt-get install systemd); .ci/run installs it")
        }
        let (_, output) = try run("/usr/bin/systemd-analyze",
                                  ["security", "--offline=true", "--no-pager", repoRoot.appendingPathComponent("systemd/bearing.service").path])
        let line = output.split(separator: "\n").first { $0.contains("Overall exposure level") } ?? ""
        let number = line.split(separator: " ").compactMap { Double($0) }.first
        print("offline: \(line)")
        XCTAssertNotNil(number, "no exposure level in: \(output.suffix(400))")
        XCTAssertLessThanOrEqual(number ?? 99, 1.5)
    }

    func testLintianFindsNothingAndThePackageHasWhatItShould() throws {
        let deb = try package()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/lintian") else {
            throw XCTSkip("SKIPPED: lintian is not installed (apt-get install lintian); .ci/run installs it")
        }
        let lintian = try run("/usr/bin/lintian", [deb.path])
        let tags = lintian.output.split(separator: "\n").filter { $0.hasPrefix("E:") || $0.hasPrefix("W:") }
        XCTAssertEqual(tags, [], "lintian:\n\(lintian.output)")

        let contents = try run("/usr/bin/dpkg-deb", ["--contents", deb.path]).output
        let info = try run("/usr/bin/dpkg-deb", ["--info", deb.path]).output
        // Units under /usr/lib on Debian 13 (lintian there: aliased-location), /lib on Debian 12, as scripts/package.
        let units = ProcessInfo.processInfo.environment["BEARING_TOOLCHAIN"] == "trixie" ? "./usr/lib/systemd/system" : "./lib/systemd/system"
        for path in ["./usr/bin/bearing", "\(units)/bearing.service", "\(units)/bearing.socket",
                     "./usr/lib/sysusers.d/bearing.conf", "./usr/lib/tmpfiles.d/bearing.conf", "./etc/bearing/bearing.yaml",
                     "./etc/logrotate.d/bearing", "./usr/share/bearing/boards/rpi-4b.yaml",
                     "./usr/share/bash-completion/completions/bearing", "./usr/share/zsh/vendor-completions/_bearing",
                     "./usr/share/fish/vendor_completions.d/bearing.fish", "./usr/share/man/man1/bearing.1.gz"] {
            XCTAssertTrue(contents.contains(path), "\(path) missing from the package")
        }
        // The libgps runtime this system has: libgps28 (gpsd 3.22, Debian 12) or libgps30t64 (3.25, Debian 13).
        let installed = try run("/usr/bin/dpkg-query", ["-W", "-f", "${Package} ${Status}\n", "libgps[0-9]*"]).output
        let libgps = Set(installed.split(separator: "\n").filter { $0.hasSuffix(" installed") }
            .compactMap { $0.split(separator: " ").first.map(String.init) })
        XCTAssertEqual(libgps.count, 1, "not one installed libgps runtime package: \(libgps)")
        for name in libgps {
            XCTAssertTrue(info.contains(name), "Depends lacks \(name):\n\(info)")
        }
        XCTAssertFalse(info.contains("libswift"), "the Swift runtime must be linked statically:\n\(info)")

        // A man page for every command `bearing --help` lists, and none for a command it does not.
        let help = try run(bearingBinary.path, ["--help"]).output
        let subcommandLines = help.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n") ?? []
        // A subcommand's line is indented two spaces; its wrapped description further.
        let named = subcommandLines.filter { line in line.hasPrefix("  ") && !line.hasPrefix("   ") }
        let firstWords: [String] = named.compactMap { line in line.split(separator: " ").first.map(String.init) }
        let listed = firstWords.filter { word in word.first?.isLetter == true && word != "See" && word != "help" }
        XCTAssertGreaterThan(listed.count, 5, help)
        let pages = contents.split(separator: "\n").compactMap { line -> String? in
            guard let r = line.range(of: "./usr/share/man/man1/bearing-") else { return nil }
            return String(line[r.upperBound...].dropLast(".1.gz".count))
        }
        XCTAssertEqual(Set(pages), Set(listed), "man pages vs the subcommands in bearing --help")
    }

    /// Boots Debian's systemd in a VM, installs the package and runs scripts/vm-systemd/suite.sh there.
    func testThePackageUnderARealSystemd() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/qemu-system-x86_64") else {
            throw XCTSkip("SKIPPED: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86); .ci/run installs it")
        }
        let deb = try package()
        let vm = repoRoot.appendingPathComponent("scripts/vm-systemd")
        let started = Date()
        // The suite's own waits come to ~2 min; `dpkg -i` over the system's root (9p, TCG) takes ~30 s, as long
        // as the suite keeps man-db's trigger (mandb over every man page: ~100 s of each `dpkg -i` and `dpkg -P`
        // on a 1100-package host) switched off in the guest. The timeout only stops a hung VM.
        let timeout = ProcessInfo.processInfo.environment["VM_TIMEOUT"] ?? "1200"
        let (_, output) = try run(vm.appendingPathComponent("run").path, [
            vm.appendingPathComponent("suite.sh").path, deb.path, vm.appendingPathComponent("reader.py").path],
            environment: ["VM_TIMEOUT": timeout])
        let text = output.replacingOccurrences(of: "\r", with: "")
        print(text)
        print("VM suite: \(String(format: "%.0f", Date().timeIntervalSince(started))) s")

        let checks = Dictionary(text.split(separator: "\n").compactMap { line -> (String, Bool)? in
            guard let r = line.range(of: "SUITE-CHECK ") else { return nil }
            let words = line[r.upperBound...].split(separator: " ")
            guard words.count >= 2 else { return nil }
            return (String(words[0]), words[1] == "PASS")
        }, uniquingKeysWith: { $0 && $1 })
        let expected = ["install", "verify", "exposure", "groups", "socket-active", "socket-mode", "stopped-socket-stays",
                        "first-connection-starts", "notify-active", "notify-status", "other-user-refused", "magnetometer-read",
                        "no-thread-priority-error", "device-acl-refuses", "calibrate-saved", "reload", "blackbox-save", "watchdog-restart",
                        "watchdog-no-loss", "blackbox-fault", "stop-fast", "datalog-intact", "config-error-no-restart", "upgrade", "upgrade-restarted",
                        "upgrade-socket-kept", "upgrade-conffile", "upgrade-state", "upgrade-readers-reconnect", "upgrade-socket-changed", "purge",
                        "purge-clean"]
        for name in expected {
            XCTAssertEqual(checks[name], true, "VM check \(name): \(checks[name] == nil ? "did not run" : "failed")")
        }
        XCTAssertTrue(text.contains("SUITE-DONE passed=\(expected.count) failed=0"), "the suite did not finish cleanly")
    }
}
