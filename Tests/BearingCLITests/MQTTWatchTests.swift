import BearingModel
import BearingPOSIX
import BearingMQTT
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `bearing watch --mqtt` against a real mosquitto that wants what a fleet's broker wants: a user name and a
/// password (read from a file), or TLS with client certificates. A refusal that trying again cannot fix ends
/// the watch at once with an error naming the option to change; a broker that is down is tried again.
final class MQTTWatchTests: XCTestCase {
    struct Watched {
        var status: Int32
        var out: String
        var err: String
        /// From start to exit (or to the kill at the deadline).
        var seconds: Double
        var timedOut: Bool
        var lines: [String] { out.split(separator: "\n").map(String.init) }
    }

    /// Runs `bearing watch ARGS` until it exits, killing it after `timeout` seconds.
    func watch(_ args: [String], timeout: Double = 30) throws -> Watched {
        let start = Syscall.monotonicSeconds()
        let (p, out, err) = try launchBearing(["watch"] + args)
        while p.isRunning && Syscall.monotonicSeconds() - start < timeout { usleep(20_000) }
        let timedOut = p.isRunning
        if timedOut { kill(p.processIdentifier, SIGKILL) }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return Watched(status: p.terminationStatus, out: text, err: errText, seconds: Syscall.monotonicSeconds() - start, timedOut: timedOut)
    }

    /// What a device says, published with mosquitto_pub (`options`: its credentials or TLS files): a
    /// retained `online` on ROOT/DEVICE/status and a retained numbered ATT on ROOT/DEVICE/att.
    func publishDevice(_ device: String, port: Int, options: [String] = []) throws {
        let att = #"{"class":"ATT","seq":41,"time":"2026-01-02T03:04:05.000Z","mheading":123.4,"pitch":1.5,"roll":-2.5}"#
        for (topic, payload) in [("bearing/\(device)/status", "online"), ("bearing/\(device)/att", att)] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
            p.arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", "1", "-r", "-m", payload] + options
            let err = Pipe()
            p.standardError = err
            try p.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, "mosquitto_pub \(topic): \(text)")
        }
    }

    /// A file holding `text`.
    func write(_ text: String, to url: URL) throws -> String {
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// A broker that refuses anonymous clients, and the device's lines through it: a real `bearing run
    /// --board simulator` publishing with its own user, watched with the watcher's; the password is on no
    /// command line and in no output.
    func testTheRightCredentialsShowTheDevicesLines() throws {
        let dir = temporaryDirectory("watch-credentials")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"), users: ["boat-7": "b0at-pass", "skipper": "w4tch-pass"])
        try broker.start()
        defer { broker.stop() }
        let devicePassword = try write("b0at-pass\n", to: dir.appendingPathComponent("device-password"))
        let config = dir.appendingPathComponent("bearing.yaml")
        try """
            gpsd: {host: 127.0.0.1, port: \(freePort()), retry_initial: 1, retry_max: 5}
            socket: {path: \(dir.appendingPathComponent("boat-7.sock").path)}
            mqtt:
              broker: \(broker.url)
              device: boat-7
              username: boat-7
              password_file: \(devicePassword)
              retry_initial: 0.2
              retry_max: 1
              spool: {directory: \(dir.appendingPathComponent("spool").path)}
              topics: {att: [{op: throttle, interval: 0.2}], tpv: false, sky: false}
            """.write(to: config, atomically: true, encoding: .utf8)
        let (device, _, deviceErr) = try launchBearing(["run", "--board", "simulator", "--config", config.path, "--log-level", "info"])
        defer {
            if device.isRunning { kill(device.processIdentifier, SIGTERM) }
            _ = deviceErr.fileHandleForReading.readDataToEndOfFile()
            device.waitUntilExit()
        }
        // The first line only: what follows is not part of the password.
        let password = try write("w4tch-pass\nnot the password\n", to: dir.appendingPathComponent("watch-password"))
        let w = try watch(["--mqtt", broker.url, "--mqtt-username", "skipper", "--mqtt-password-file", password, "--count", "6"])
        XCTAssertFalse(w.timedOut, "stdout:\n\(w.out)\nstderr:\n\(w.err)")
        XCTAssertEqual(w.status, 0, w.err)
        XCTAssertEqual(w.lines.count, 6, w.out)
        XCTAssertTrue(w.lines.contains { $0 == "boat-7  online (retained)" || $0 == "boat-7  online" }, w.out)
        XCTAssertTrue(w.lines.contains { $0.hasPrefix("boat-7  ATT  ") && $0.contains("° magnetic") && $0.contains("  #") }, w.out)
        XCTAssertTrue(w.err.contains("connected to \(broker.url)"), w.err)
        XCTAssertFalse((w.out + w.err).contains("w4tch-pass"), "the password is never printed")
    }

    /// A wrong password, and no credentials at all: the broker's refusal (CONNACK 5 from mosquitto 2, 4 from
    /// others) ends the watch at once, non-zero, with one error line naming the options to change.
    func testAWrongPasswordOrNoneEndsTheWatchAtOnceNamingTheOptions() throws {
        let dir = temporaryDirectory("watch-refused")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"), users: ["skipper": "w4tch-pass"])
        try broker.start()
        defer { broker.stop() }
        try publishDevice("boat-7", port: broker.port, options: ["-u", "skipper", "-P", "w4tch-pass"])
        let wrong = try write("not-the-pass\n", to: dir.appendingPathComponent("wrong"))

        let w = try watch(["--mqtt", broker.url, "--mqtt-username", "skipper", "--mqtt-password-file", wrong, "--count", "2"], timeout: 20)
        XCTAssertFalse(w.timedOut, "a refusal is not retried for ever: \(w.err)")
        XCTAssertNotEqual(w.status, 0, w.err)
        XCTAssertLessThan(w.seconds, 5, "at once, not after a timeout: \(w.err)")
        XCTAssertEqual(w.out, "", "nothing watched")
        let errorLines = w.err.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
        XCTAssertEqual(errorLines.count, 1, w.err)
        let error = String(errorLines.first ?? "")
        XCTAssertTrue(error.contains("refused the connection") && error.contains("check --mqtt-username and --mqtt-password-file"), w.err)
        XCTAssertFalse(error.contains("mqtt.username") || error.contains("mqtt.password_file"), "the watch's options, not the daemon's keys: \(error)")
        XCTAssertFalse(w.err.contains("again in"), "not retried: \(w.err)")
        XCTAssertFalse(w.err.contains("not-the-pass"), "the password is never printed")
        print("bearing watch, wrong password: \(error) (\(String(format: "%.2f", w.seconds)) s)")

        let anonymous = try watch(["--mqtt", broker.url, "--count", "2"], timeout: 20)
        XCTAssertFalse(anonymous.timedOut, anonymous.err)
        XCTAssertNotEqual(anonymous.status, 0, anonymous.err)
        XCTAssertLessThan(anonymous.seconds, 5, anonymous.err)
        XCTAssertTrue(anonymous.err.contains("set --mqtt-username and --mqtt-password-file"), anonymous.err)
    }

    /// A password file that is missing or not a file: an error naming the option, the file and the errno's
    /// text, before any connection.
    func testAnUnreadablePasswordFileIsNamed() throws {
        let dir = temporaryDirectory("watch-password-file")
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("none").path
        let w = try watch(["--mqtt", "mqtt://127.0.0.1:\(freePort())", "--mqtt-username", "skipper", "--mqtt-password-file", missing], timeout: 10)
        XCTAssertFalse(w.timedOut, w.err)
        XCTAssertNotEqual(w.status, 0, w.err)
        XCTAssertTrue(w.err.contains("--mqtt-password-file \(missing): No such file or directory"), w.err)
        XCTAssertFalse(w.err.contains("connect"), "no connection is tried: \(w.err)")

        let directory = try watch(["--mqtt", "mqtt://127.0.0.1:\(freePort())", "--mqtt-username", "skipper", "--mqtt-password-file", dir.path], timeout: 10)
        XCTAssertNotEqual(directory.status, 0, directory.err)
        XCTAssertTrue(directory.err.contains("--mqtt-password-file \(dir.path): Is a directory"), directory.err)

        let ca = try watch(["--mqtt", "mqtts://127.0.0.1:\(freePort())", "--mqtt-ca", missing], timeout: 10)
        XCTAssertNotEqual(ca.status, 0, ca.err)
        XCTAssertTrue(ca.err.contains("--mqtt-ca \(missing): No such file or directory"), ca.err)
    }

    /// TLS with a client certificate (the broker takes its CN as the user name): the device's lines. A wrong
    /// CA ends the watch at once naming --mqtt-ca; no client certificate, or one the broker refuses, ends it
    /// naming --mqtt-certificate (and --mqtt-key).
    func testTLSWithAClientCertificateAndTheRefusalsThatEndIt() throws {
        let dir = temporaryDirectory("watch-tls")
        defer { try? FileManager.default.removeItem(at: dir) }
        let certs = try TestCertificates(in: dir.appendingPathComponent("certs"))
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"),
                                         certificates: certs)
        try broker.start()
        defer { broker.stop() }
        try publishDevice("boat-7", port: broker.port, options: ["--cafile", certs.path("ca.pem"), "--cert", certs.path("client.pem"), "--key", certs.path("client.key")])

        let good = try watch(["--mqtt", broker.url, "--mqtt-ca", certs.path("ca.pem"), "--mqtt-certificate", certs.path("client.pem"),
                              "--mqtt-key", certs.path("client.key"), "--count", "2"])
        XCTAssertFalse(good.timedOut, good.err)
        XCTAssertEqual(good.status, 0, good.err)
        XCTAssertEqual(Set(good.lines), ["boat-7  online (retained)",
                                         "boat-7  ATT    2026-01-02T03:04:05.000Z  123.4° magnetic  pitch 1.5°  roll -2.5°  #41"], good.out)
        XCTAssertTrue(good.err.contains("connected to \(broker.url)"), good.err)

        // The wrong CA fails on the first attempt; the broker's refusals of a client certificate may first
        // show only as a closed connection (TLS 1.3 sends them after the handshake), and are tried again.
        let cases: [(name: String, ca: String, client: (certificate: String, key: String)?, expect: [String])] = [
            ("wrong CA", "other-ca.pem", ("client.pem", "client.key"), ["certificate verify failed", "does not verify against --mqtt-ca"]),
            ("no client certificate", "ca.pem", nil, ["set --mqtt-certificate and --mqtt-key"]),
            ("a client certificate from another CA", "ca.pem", ("other-client.pem", "other-client.key"),
             ["does not trust the CA that signed the client certificate (--mqtt-certificate)"]),
            ("an expired client certificate", "ca.pem", ("expired-client.pem", "client.key"), ["refuses the client certificate (--mqtt-certificate) as expired"]),
        ]
        for c in cases {
            let files = c.client.map { ["--mqtt-certificate", certs.path($0.certificate), "--mqtt-key", certs.path($0.key)] } ?? []
            let w = try watch(["--mqtt", broker.url, "--mqtt-ca", certs.path(c.ca)] + files + ["--count", "2"], timeout: 60)
            XCTAssertFalse(w.timedOut, "\(c.name): a TLS failure that needs another file is not retried for ever: \(w.err)")
            XCTAssertNotEqual(w.status, 0, "\(c.name): \(w.err)")
            XCTAssertEqual(w.out, "", c.name)
            let errorLines = w.err.split(separator: "\n").filter { $0.hasPrefix("Error: ") }
            XCTAssertEqual(errorLines.count, 1, "\(c.name): \(w.err)")
            let error = String(errorLines.first ?? "")
            for phrase in c.expect { XCTAssertTrue(error.contains(phrase), "\(c.name): \(phrase) in \(w.err)") }
            XCTAssertFalse(error.contains("mqtt.tls"), "\(c.name): the watch's options, not the daemon's keys: \(error)")
            if c.name == "wrong CA" { XCTAssertLessThan(w.seconds, 5, "at once: \(w.err)") }
            print("bearing watch, \(c.name): \(error) (\(String(format: "%.2f", w.seconds)) s)")
        }
    }

    /// A broker that is down is tried again, as before: the watch waits, and shows the device once the broker
    /// is there.
    func testABrokerThatIsDownIsTriedAgain() throws {
        let dir = temporaryDirectory("watch-down")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broker = try MosquittoBroker(directory: dir.appendingPathComponent("broker"))
        let (p, out, err) = try launchBearing(["watch", "--mqtt", broker.url, "--count", "1"])
        defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        usleep(2_500_000)
        XCTAssertTrue(p.isRunning, "connection refused is tried again")
        try broker.start()
        defer { broker.stop() }
        try publishDevice("boat-7", port: broker.port)
        let deadline = Syscall.monotonicSeconds() + 30
        while p.isRunning && Syscall.monotonicSeconds() < deadline { usleep(50_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL) }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, errText)
        XCTAssertTrue(errText.contains("Connection refused; again in"), errText)
        // Retained when the watch connected after the device's message, live when before.
        XCTAssertTrue(["boat-7  online (retained)\n", "boat-7  online\n"].contains(text), text)
    }

    /// Options that mean nothing without --mqtt, TLS files for a plain broker, a key without its
    /// certificate, a password without a user: refused before anything runs.
    func testTheMQTTOptionsAreValidated() throws {
        let cases: [(args: [String], expect: String)] = [
            (["--mqtt", "mqtts://127.0.0.1:8883", "--mqtt-key", "/etc/hostname"], "--mqtt-certificate and --mqtt-key go together: give both or neither"),
            (["--mqtt", "mqtts://127.0.0.1:8883", "--mqtt-certificate", "/etc/hostname"], "--mqtt-certificate and --mqtt-key go together"),
            (["--mqtt-username", "skipper", "--mqtt-password-file", "/etc/hostname"], "--mqtt-username, --mqtt-password-file: only with --mqtt URL"),
            (["--mqtt-ca", "/etc/hostname"], "--mqtt-ca: only with --mqtt URL"),
            (["--mqtt-root", "fleet"], "--mqtt-root: only with --mqtt URL"),
            (["--mqtt", "mqtt://127.0.0.1", "--mqtt-ca", "/etc/hostname"], "--mqtt-ca: only for an mqtts:// broker"),
            (["--mqtt", "mqtt://127.0.0.1", "--mqtt-password-file", "/etc/hostname"], "--mqtt-password-file needs --mqtt-username"),
            (["--mqtt", "mqtt://skipper:pass@127.0.0.1"], "the user name goes in --mqtt-username and the password in --mqtt-password-file"),
            (["--mqtt", "http://127.0.0.1"], "expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"),
        ]
        for c in cases {
            let w = try watch(c.args, timeout: 10)
            XCTAssertEqual(w.status, 64, "\(c.args): a usage error (EX_USAGE): \(w.err)")
            XCTAssertTrue(w.err.contains("Error: ") && w.err.contains(c.expect), "\(c.args): \(w.err)")
        }
    }
}
