import BearingModel
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `bearing report`, as a user runs it: the archive it writes, untarred and searched byte by byte for every
/// secret the config points at. The commands it runs come from a `PATH` of the test's making (tar and gzip,
/// and fake journalctl and systemd-analyze where a test wants them), so that parts are missing for known reasons.
final class ReportTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        let (status, out, _) = try runBearing(["report", "--help"])
        guard status == 0, out.contains("USAGE: bearing report") else {
            throw XCTSkip("SKIPPED: this bearing has no `report` command (ReportCommand is not registered in Bearing.swift)")
        }
        dir = temporaryDirectory("report")
    }

    override func tearDown() {
        if let dir { try? FileManager.default.removeItem(at: dir) }
    }

    /// A directory for `PATH` holding tar and gzip, and `scripts` (name: shell script body).
    func bin(_ scripts: [String: String] = [:]) throws -> URL {
        let bin = dir.appendingPathComponent("bin")
        try? FileManager.default.removeItem(at: bin)
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for tool in ["tar", "gzip"] {
            let real = try XCTUnwrap(["/usr/bin/\(tool)", "/bin/\(tool)"].first { FileManager.default.isExecutableFile(atPath: $0) }, "\(tool) is not installed")
            try FileManager.default.createSymbolicLink(atPath: bin.appendingPathComponent(tool).path, withDestinationPath: real)
        }
        for (name, body) in scripts {
            let url = bin.appendingPathComponent(name)
            try "#!/bin/sh\n\(body)\n".write(to: url, atomically: true, encoding: .utf8)
            chmod(url.path, 0o755)
        }
        return bin
    }

    /// Runs `bearing report ARGS` with `PATH` set to `bin` and `TMPDIR` to a directory of its own.
    func report(_ args: [String], bin: URL) throws -> (status: Int32, out: String, err: String) {
        let tmp = dir.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        let (status, out, err) = try runBearing(["report"] + args, environment: ["PATH": bin.path, "TMPDIR": tmp.path])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: tmp.path), [], "the private staging directory is removed")
        return (status, out, err)
    }

    /// The archive's files, by name, as `tar -xzf` gives them.
    func untar(_ archive: URL) throws -> [String: Data] {
        let into = dir.appendingPathComponent("extracted-\(archive.lastPathComponent)")
        try FileManager.default.createDirectory(at: into, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "tar -xzf \"$0\" -C \"$1\"", archive.path, into.path]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "tar -xzf \(archive.path)")
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: into.path) {
            files[name] = try Data(contentsOf: into.appendingPathComponent(name))
        }
        return files
    }

    /// Fails naming each file of the archive that holds any of `secrets`, searched in its raw bytes.
    func assertHoldsNone(_ secrets: [String], in files: [String: Data], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertFalse(files.isEmpty, file: file, line: line)
        for (name, data) in files {
            for secret in secrets {
                XCTAssertNil(data.range(of: Data(secret.utf8)), "\(name) holds \(secret)", file: file, line: line)
            }
        }
    }

    /// The manifest's line for `part`.
    func manifestLine(_ files: [String: Data], _ part: String) -> String {
        let manifest = String(decoding: files["MANIFEST.txt"] ?? Data(), as: UTF8.self)
        return manifest.split(separator: "\n").first { $0.hasPrefix(part + " ") }.map(String.init) ?? "(\(part) not in the manifest:\n\(manifest))"
    }

    func testTheArchiveHoldsTheRedactedConfigAndNoSecret() throws {
        let unique = UUID().uuidString
        let password = "pw-file-\(unique)", keyMarker = "KEYMARK-\(unique)", urlPassword = "urlpw-\(unique)", commented = "old-\(unique)"
        let calibrationMarker = "CALMARK-\(unique)"
        let passwordFile = dir.appendingPathComponent("mqtt-password"), keyFile = dir.appendingPathComponent("client.key")
        try "\(password)\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        try "-----BEGIN PRIVATE KEY-----\n\(keyMarker)\n-----END PRIVATE KEY-----\n".write(to: keyFile, atomically: true, encoding: .utf8)
        try "-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n".write(to: dir.appendingPathComponent("client.pem"), atomically: true, encoding: .utf8)
        let calibration = dir.appendingPathComponent("calibration.json")
        try "{\"chip\": \"qmc5883l\", \"note\": \"\(calibrationMarker)\"}\n".write(to: calibration, atomically: true, encoding: .utf8)
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            # the report test's config
            socket:
              path: \(dir.path)/bearing.sock
            magnetometer:
              bus: simulator
              calibration: \(calibration.path)
            imu:
              bus: simulator
              calibration: \(keyFile.path)      # wrong, and must not be taken for a calibration
              level: \(passwordFile.path)
            mqtt:
              broker: mqtts://broker.example:8883
              # was mqtts://boat7:\(urlPassword)@old-broker.example:8883
              # password: \(commented)
              username: boat7
              password_file: \(passwordFile.path)
              tls:
                certificate: \(dir.path)/client.pem
                key: \(keyFile.path)

            """.write(to: config, atomically: true, encoding: .utf8)
        let bin = try bin([
            "journalctl": """
                echo "2026-06-01T12:00:00+0000 pi bearing[42]: journalctl $*"
                echo "2026-06-01T12:00:01+0000 pi bearing[42]: broker mqtts://boat7:\(urlPassword)@old-broker.example:8883 refused"
                printf -- '-----BEGIN PRIVATE KEY-----\\n\(keyMarker)\\n-----END PRIVATE KEY-----\\n'
                """,
            "systemd-analyze": "echo 'Unit bearing-test.service not found.' >&2; exit 1",
        ])
        let archive = dir.appendingPathComponent("out/report.tar.gz")
        try FileManager.default.createDirectory(at: archive.deletingLastPathComponent(), withIntermediateDirectories: true)

        let (status, out, err) = try report(["--output", archive.path, "--config", config.path, "--unit", "bearing-test.service",
                                             "--journal-lines", "7"], bin: bin)
        XCTAssertEqual(status, 0, "stdout: \(out)\nstderr: \(err)")
        XCTAssertTrue(out.contains("wrote \(archive.path)"), out)
        var st = stat()
        XCTAssertEqual(stat(archive.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o600, "a report may hold positions")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: archive.deletingLastPathComponent().path), ["report.tar.gz"],
                       "no temporary file is left beside it")

        let files = try untar(archive)
        XCTAssertEqual(Set(files.keys), ["MANIFEST.txt", "versions.txt", "config.yaml", "calibration.json", "journal.txt"])
        let manifest = String(decoding: files["MANIFEST.txt"]!, as: UTF8.self)
        for (name, data) in files where name != "MANIFEST.txt" {
            XCTAssertTrue(manifestLine(files, name).contains("\(data.count) bytes"), "\(name): \(manifestLine(files, name))")
        }
        let yaml = String(decoding: files["config.yaml"]!, as: UTF8.self)
        XCTAssertTrue(yaml.contains("# was mqtts://boat7:<redacted>@old-broker.example:8883"), yaml)
        XCTAssertTrue(yaml.contains("# password: <redacted>"), yaml)
        XCTAssertTrue(yaml.hasPrefix("# the report test's config\nsocket:\n"), "the rest as written: \(yaml)")
        XCTAssertTrue(yaml.contains("  password_file: \(passwordFile.path)\n") && yaml.contains("    key: \(keyFile.path)\n"), "paths stay: \(yaml)")
        XCTAssertTrue(String(decoding: files["calibration.json"]!, as: UTF8.self).contains(calibrationMarker))
        let versions = String(decoding: files["versions.txt"]!, as: UTF8.self)
        XCTAssertTrue(versions.hasPrefix("bearing \(Release.version)\n"), versions)
        XCTAssertTrue(versions.contains("uname -a: command missing: uname is not installed"), versions)
        let journal = String(decoding: files["journal.txt"]!, as: UTF8.self)
        XCTAssertTrue(journal.contains("journalctl -u bearing-test.service -n 7 --no-pager -o short-iso"), journal)

        XCTAssertTrue(manifestLine(files, "accelerometer.json").contains("left out: \(keyFile.path) is the TLS key"), manifest)
        XCTAssertTrue(manifestLine(files, "level.json").contains("left out: \(passwordFile.path) is the MQTT password file"), manifest)
        XCTAssertTrue(manifestLine(files, "security.txt").contains("not collected: unit unknown: bearing-test.service"), manifest)
        XCTAssertTrue(manifestLine(files, "blackbox.bbx").contains("not collected: daemon not running: no socket at \(dir.path)/bearing.sock"), manifest)
        XCTAssertTrue(manifestLine(files, "board.yaml").contains("not collected"), manifest)
        XCTAssertTrue(manifest.contains("unit bearing-test.service: state unknown: command missing: systemctl is not installed"), manifest)
        XCTAssertTrue(manifest.contains("Unit bearing-test.service not found."), "a command's standard error is kept: \(manifest)")

        assertHoldsNone([password, keyMarker, "BEGIN PRIVATE KEY", urlPassword, commented], in: files)
    }

    func testAnInvalidConfigAndMissingCommandsStillGiveAReport() throws {
        let unique = UUID().uuidString
        let urlPassword = "urlpw-\(unique)", inline = "inline-\(unique)", token = "tok-\(unique)"
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            mqtt:
              broker: "mqtt://boat7:\(urlPassword)@broker.example:1883"
              username: boat7
              password: \(inline)
            fleet: {api_token: '\(token)', name: boat7}

            """.write(to: config, atomically: true, encoding: .utf8)
        let archive = dir.appendingPathComponent("report.tar.gz")

        let (status, out, err) = try report(["--output", archive.path, "--config", config.path], bin: try bin())
        XCTAssertEqual(status, 0, "stdout: \(out)\nstderr: \(err)")
        let files = try untar(archive)
        XCTAssertEqual(Set(files.keys), ["MANIFEST.txt", "versions.txt", "config.yaml"])
        XCTAssertEqual(String(decoding: files["config.yaml"]!, as: UTF8.self), """
            mqtt:
              broker: "mqtt://boat7:<redacted>@broker.example:1883"
              username: boat7
              password: <redacted>
            fleet: {api_token: '<redacted>', name: boat7}

            """)
        let manifest = String(decoding: files["MANIFEST.txt"]!, as: UTF8.self)
        XCTAssertTrue(manifest.contains("config: the config is invalid ("), manifest)
        XCTAssertTrue(manifestLine(files, "journal.txt").contains("not collected: command missing: journalctl is not installed"), manifest)
        XCTAssertTrue(manifestLine(files, "security.txt").contains("not collected: command missing: systemd-analyze is not installed"), manifest)
        XCTAssertTrue(manifestLine(files, "blackbox.bbx").contains("not collected: daemon not running"), manifest)
        XCTAssertTrue(out.contains("without journal.txt: command missing"), out)
        assertHoldsNone([urlPassword, inline, token], in: files)
    }

    func testTheUnitsCommandLineNamesTheConfigAndBoard() throws {
        let board = dir.appendingPathComponent("my-board.yaml")
        try FileManager.default.copyItem(at: repoRoot.appendingPathComponent("boards/rpi-4b.yaml"), to: board)
        let config = dir.appendingPathComponent("unit.yaml")
        try "magnetometer:\n  calibration: \(dir.path)/calibration.json\n".write(to: config, atomically: true, encoding: .utf8)
        let bin = try bin([
            "systemctl": """
                [ "$1 $2" = "show bearing.service" ] || exit 9
                echo LoadState=loaded
                echo ActiveState=inactive
                echo SubState=dead
                echo "ExecStart={ path=/usr/bin/bearing ; argv[]=/usr/bin/bearing run --config \(config.path) --board=\(board.path) --module bn-880-hmc5883l ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }"
                """,
            "journalctl": """
                echo 'Hint: You are currently not seeing messages from other users and the system.' >&2
                echo '-- No entries --'
                """,
        ])
        let archive = dir.appendingPathComponent("report.tar.gz")
        let (status, out, err) = try report(["--output", archive.path], bin: bin)
        XCTAssertEqual(status, 0, "stdout: \(out)\nstderr: \(err)")
        let files = try untar(archive)
        let manifest = String(decoding: files["MANIFEST.txt"]!, as: UTF8.self)
        XCTAssertTrue(manifest.contains("unit bearing.service: LoadState=loaded ActiveState=inactive SubState=dead\n"), manifest)
        XCTAssertTrue(manifest.contains("config: \(config.path) (the unit's --config)\n"), manifest)
        XCTAssertEqual(files["config.yaml"], try Data(contentsOf: config))
        XCTAssertEqual(files["board.yaml"], try Data(contentsOf: board), "the profile has no secret: as written")
        XCTAssertTrue(manifestLine(files, "calibration.json").contains("absent: no file at \(dir.path)/calibration.json (not calibrated yet)"),
                      "the board's magnetometer is on: \(manifest)")
        XCTAssertTrue(manifestLine(files, "journal.txt").contains("partial, permission denied"), manifest)
        XCTAssertTrue(manifestLine(files, "blackbox.bbx").contains("daemon not running: bearing.service is inactive"), manifest)
    }

    func testAnArchiveThatCannotBeWrittenFailsAndLeavesNothing() throws {
        let missing = dir.appendingPathComponent("no-such-directory/report.tar.gz").path
        var (status, _, err) = try report(["--output", missing, "--config", "/nonexistent/bearing.yaml"], bin: try bin())
        XCTAssertEqual(status, 1, err)
        XCTAssertTrue(err.contains("no directory \(dir.path)/no-such-directory"), err)

        // Without tar: the parts are staged, then the staging directory goes (`report` checks it is empty).
        let emptyBin = dir.appendingPathComponent("empty-bin")
        try FileManager.default.createDirectory(at: emptyBin, withIntermediateDirectories: true)
        (status, _, err) = try report(["--output", dir.path, "--config", "/nonexistent/bearing.yaml"], bin: emptyBin)
        XCTAssertEqual(status, 1, err)
        XCTAssertTrue(err.contains("tar -czf: not installed"), err)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: dir.path).contains { $0.hasPrefix("bearing-report-") }, "nothing written")

        // With tar, a directory given for --output gets the archive under its default name.
        (status, _, err) = try report(["--output", dir.path, "--config", "/nonexistent/bearing.yaml"], bin: try bin())
        XCTAssertEqual(status, 0, err)
        let written = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("bearing-report-") }
        XCTAssertEqual(written.count, 1, "\(written)")
        let stamp = written.first.map { $0.dropFirst("bearing-report-".count).dropLast(".tar.gz".count) } ?? ""
        XCTAssertTrue(stamp.count == 16 && stamp.hasPrefix("20") && stamp.hasSuffix("Z") && Array(stamp)[8] == "T", "\(written)")
    }

    func testBadOptionsAreUsageErrors() throws {
        let bin = try bin()
        for args in [["--journal-lines", "0"], ["--unit", "../bearing.service"]] {
            let (status, _, err) = try report(args, bin: bin)
            XCTAssertEqual(status, 64, "\(args): \(err)")
            XCTAssertTrue(err.contains(args[0]), err)
        }
    }
}
