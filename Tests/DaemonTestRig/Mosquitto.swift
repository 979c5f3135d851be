import BearingModel
import BearingPOSIX
import BearingMQTT
import BearingDaemon
import Foundation
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Debian's mosquitto on a free loopback port, with a config the test writes: anonymous, persistent (its
/// database in `directory`, saved when it stops), and no limit on the messages it queues for a subscriber
/// with a persistent session while that subscriber is away (mosquitto's default keeps 1000).
public final class MosquittoBroker {
    public let directory: URL
    public let port: Int
    public let extraConfig: String
    /// A TLS listener instead of a plain one: the CA clients' certificates must chain to, the broker's
    /// certificate and key; clients must present a certificate.
    public let tls: (ca: String, certificate: String, key: String)?
    /// Users and passwords (`mosquitto_passwd`), anonymous clients refused; nil: anonymous allowed.
    public let users: [String: String]?
    /// An `acl_file` to obey (mosquitto's ACL syntax).
    public let acl: String?
    private var process: Process?

    /// Skips, saying so, when mosquitto is not installed.
    public init(directory: URL, port: Int = freePort(), extraConfig: String = "", tls: (ca: String, certificate: String, key: String)? = nil,
                users: [String: String]? = nil, acl: String? = nil) throws {
        self.tls = tls
        self.users = users
        self.acl = acl
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto") else {
            throw XCTSkip("SKIPPED: /usr/sbin/mosquitto missing (Debian's mosquitto, scripts/apt-packages)")
        }
        self.directory = directory
        self.port = port
        self.extraConfig = extraConfig
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// A TLS listener with `certificates`' CA and a broker certificate of theirs (`server.pem` or another,
    /// e.g. `expired-server.pem`), clients' certificates required.
    public convenience init(directory: URL, certificates: TestCertificates, server: String = "server.pem") throws {
        try self.init(directory: directory, tls: (certificates.path("ca.pem"), certificates.path(server), certificates.path("server.key")))
    }

    public var url: String { "\(tls == nil ? "mqtt" : "mqtts")://127.0.0.1:\(port)" }
    public var log: String { (try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? "" }
    public var isRunning: Bool { process?.isRunning ?? false }

    /// Starts it and waits until it accepts connections (10 s at most).
    public func start() throws {
        let config = directory.appendingPathComponent("mosquitto.conf")
        var access = "allow_anonymous true"
        if let users {
            let file = directory.appendingPathComponent("passwords")
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            for (user, password) in users.sorted(by: { $0.key < $1.key }) {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
                p.arguments = ["-b", file.path, user, password]
                try p.run()
                p.waitUntilExit()
                guard p.terminationStatus == 0 else { throw CertificateError(message: "mosquitto_passwd \(user) failed (\(p.terminationStatus))") }
            }
            access = "allow_anonymous false\npassword_file \(file.path)"
        }
        if let acl {
            let file = directory.appendingPathComponent("acl")
            try acl.write(to: file, atomically: true, encoding: .utf8)
            access += "\nacl_file \(file.path)"
        }
        try """
            per_listener_settings false
            \(getuid() == 0 ? "user root" : "")
            listener \(port) 127.0.0.1
            \(tls.map { "cafile \($0.ca)\ncertfile \($0.certificate)\nkeyfile \($0.key)\nrequire_certificate true\nuse_identity_as_username true" } ?? "")
            \(access)
            persistence true
            persistence_location \(directory.path)/
            max_queued_messages 0
            log_dest file \(directory.path)/mosquitto.log
            log_type error
            log_type warning
            log_type notice
            log_type information
            \(extraConfig)
            """.write(to: config, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", config.path]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        process = p
        let deadline = Syscall.monotonicSeconds() + 10
        while Syscall.monotonicSeconds() < deadline {
            if !p.isRunning { XCTFail("mosquitto exited at start: \(log.suffix(2000))"); return }
            if Self.accepts(port) { return }
            usleep(20_000)
        }
        XCTFail("mosquitto did not listen on \(port) in 10 s: \(log.suffix(2000))")
    }

    /// Publishes with mosquitto_pub at QoS 1 (`payload` empty: a zero-length message, which clears a retained
    /// one); `login` as mosquitto_pub takes it (`-u`, `-P`). Returns its exit status.
    @discardableResult
    public func publish(_ topic: String, _ payload: String, retain: Bool = false, login: [String] = []) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        p.arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", "1"] + (retain ? ["-r"] : []) + login
            + (payload.isEmpty ? ["-n"] : ["-m", payload])
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// SIGTERM (mosquitto saves its database), then waits.
    public func stop() {
        guard let p = process, p.isRunning else { return }
        kill(p.processIdentifier, SIGTERM)
        p.waitUntilExit()
    }

    deinit {
        if let p = process, p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return withLoopbackAddress(port: port) { connect(fd, $0, $1) } == 0
    }
}

/// A subscriber with a persistent session (QoS 1, reconnecting for ever) that writes each message as
/// `RETAINED TOPIC PAYLOAD` to a file: Debian's `mosquitto_sub`, or Python's paho-mqtt
/// (`Tests/Fixtures/mqtt/subscribe.py`).
public final class MQTTSubscriber {
    public enum Kind: String, Sendable { case mosquittoSub = "mosquitto_sub", paho = "paho-mqtt" }

    public let kind: Kind
    public let output: URL
    private let process = Process()

    /// `options`: more of mosquitto_sub's options (TLS: `--cafile`, `--cert`, `--key`; `-u`, `-P`).
    public init(_ kind: Kind, port: Int, topic: String, clientID: String, output: URL, options: [String] = []) throws {
        self.kind = kind
        self.output = output
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        switch kind {
        case .mosquittoSub:
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub") else {
                throw XCTSkip("SKIPPED: /usr/bin/mosquitto_sub missing (mosquitto-clients, scripts/apt-packages)")
            }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
            process.arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", "1", "-c", "-i", clientID,
                                 "-k", "10", "-F", "%r %t %p"] + options
            process.standardOutput = try FileHandle(forWritingTo: output)
        case .paho:
            let probe = runPython("-c", ["import paho.mqtt.client"])
            guard probe.status == 0 else { throw XCTSkip("SKIPPED: Python's paho-mqtt missing (python3-paho-mqtt): \(probe.output)") }
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [repoRoot.appendingPathComponent("Tests/Fixtures/mqtt/subscribe.py").path, String(port), topic, clientID, output.path]
            process.standardOutput = FileHandle.nullDevice
        }
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Waits until the subscription stands: publishes `probe` to `topic` (one the filter matches) with
    /// mosquitto_pub every half second until it arrives (15 s at most).
    /// `options`: mosquitto_pub's credentials, if the broker wants them.
    public func waitUntilSubscribed(port: Int, topic: String, options: [String] = [], file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Syscall.monotonicSeconds() + 15
        while Syscall.monotonicSeconds() < deadline {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
            p.arguments = ["-h", "127.0.0.1", "-p", String(port), "-t", topic, "-q", "1", "-m", "probe"] + options
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try? p.run()
            p.waitUntilExit()
            if wait(timeout: 0.5, until: { $0.messages(on: topic).contains { $0.payload == "probe" } }) { return }
        }
        XCTFail("\(kind) did not subscribe in 15 s", file: file, line: line)
    }

    /// Everything received so far, a line per message.
    public var lines: [String] {
        ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// The messages on `topic` as (retained, payload).
    public func messages(on topic: String) -> [(retained: Bool, payload: String)] {
        lines.compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, parts[1] == topic else { return nil }
            return (parts[0] == "1", String(parts[2]))
        }
    }

    /// Waits (up to `timeout` s) until `done` holds for what arrived.
    @discardableResult
    public func wait(timeout: Double, until done: (MQTTSubscriber) -> Bool) -> Bool {
        let deadline = Syscall.monotonicSeconds() + timeout
        while Syscall.monotonicSeconds() < deadline {
            if done(self) { return true }
            usleep(50_000)
        }
        return done(self)
    }

    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Syscall.monotonicSeconds() + 5
        while process.isRunning && Syscall.monotonicSeconds() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Certificates made with openssl for a TLS broker on 127.0.0.1: a CA; the broker's (SAN IP 127.0.0.1) and a
/// client's, both from it; the same two expired (valid for a day in 2024); another CA and a client from it.
/// EC P-256 keys, so that making them takes a fraction of a second.
public struct TestCertificates {
    public let dir: URL
    public func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Skips, saying so, without /usr/bin/openssl.
    public init(in dir: URL) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("SKIPPED: /usr/bin/openssl missing") }
        self.dir = dir
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try "subjectAltName=IP:127.0.0.1\n".write(to: dir.appendingPathComponent("san.ext"), atomically: true, encoding: .utf8)
        try "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\nnew_certs_dir = .\nserial = serial\ndefault_md = sha256\npolicy = p\n[p]\ncommonName = supplied\n"
            .write(to: dir.appendingPathComponent("ca.cnf"), atomically: true, encoding: .utf8)
        try "".write(to: dir.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
        try "1000\n".write(to: dir.appendingPathComponent("serial"), atomically: true, encoding: .utf8)
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for (name, cn) in [("ca", "Bearing test fleet CA"), ("other-ca", "Some other CA")] {
            try openssl(["req", "-x509"] + key + ["-keyout", "\(name).key", "-out", "\(name).pem", "-days", "30", "-subj", "/CN=\(cn)"])
        }
        for (name, cn) in [("server", "127.0.0.1"), ("client", "boat-7"), ("other-client", "boat-8")] {
            try openssl(["req"] + key + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(cn)"])
        }
        try openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "30", "-extfile", "san.ext"])
        try openssl(["x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.pem", "-days", "30"])
        try openssl(["x509", "-req", "-in", "other-client.csr", "-CA", "other-ca.pem", "-CAkey", "other-ca.key", "-CAcreateserial", "-out", "other-client.pem", "-days", "30"])
        for (name, csr, ext) in [("expired-server", "server.csr", ["-extfile", "san.ext"]), ("expired-client", "client.csr", [])] {
            try openssl(["ca", "-batch", "-config", "ca.cnf", "-cert", "ca.pem", "-keyfile", "ca.key", "-in", csr, "-out", "\(name).pem",
                         "-startdate", "20240101000000Z", "-enddate", "20240102000000Z"] + ext)
        }
    }

    private func openssl(_ args: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        p.arguments = args
        p.currentDirectoryURL = dir
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CertificateError(message: "openssl \(args.joined(separator: " ")) failed: \(text.suffix(300))") }
    }
}

public struct CertificateError: Error { public let message: String }

/// The sequence numbers of gpsd JSON messages carrying `"seq"`, in arrival order.
public func sequenceNumbers(_ payloads: [String]) -> [UInt64] {
    payloads.compactMap { p in
        guard let r = p.range(of: "\"seq\":") else { return nil }
        return UInt64(p[r.upperBound...].prefix { $0.isNumber })
    }
}

/// What a subscriber's sequence numbers prove: how many distinct, the duplicates (by number), whether the
/// first arrivals are in order, and the numbers missing between 1 and the highest.
public struct SequenceAudit: CustomStringConvertible {
    public let distinct: Int
    public let duplicates: Int
    /// First arrivals that came after a later message's first arrival.
    public let late: Int
    public var inOrder: Bool { late == 0 }
    public let missing: [UInt64]
    public let highest: UInt64

    public init(_ seqs: [UInt64], from first: UInt64 = 1) {
        var seen = Set<UInt64>()
        var highestSoFar: UInt64 = 0
        var lateCount = 0
        var dups = 0
        for s in seqs {
            if seen.contains(s) { dups += 1; continue }
            if s < highestSoFar { lateCount += 1 } else { highestSoFar = s }
            seen.insert(s)
        }
        distinct = seen.count
        duplicates = dups
        late = lateCount
        highest = highestSoFar
        missing = highest >= first ? (first...highest).filter { !seen.contains($0) } : []
    }

    public var description: String {
        "\(distinct) distinct up to \(highest), \(duplicates) duplicates, \(inOrder ? "in order" : "OUT OF ORDER (\(late) late)"), \(missing.count) missing\(missing.isEmpty ? "" : " (first: \(missing.prefix(10).map(String.init).joined(separator: ", ")))")"
    }
}
