import BearingDaemon
import BearingI2C
import BearingLog
import BearingPOSIX
import BearingSimulator
import BearingWebDoor
import DaemonTestRig
import TestSupport
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A bare HTTP/1.0 client on a raw socket: what the tests say is exactly what goes on the wire (no client
/// library adds or hides a header), and HTTP/1.0 keeps replies unchunked.
struct HTTPExchange {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
    var lines: [String] { text.split(separator: "\n").map(String.init) }
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

func httpRequest(port: Int, _ method: String, _ path: String, headers: [(String, String)] = [], body: String = "",
                 host: String? = nil, timeout: Double = 10) throws -> HTTPExchange {
    let reader = try RawTCPReader(port: port)
    var head = "\(method) \(path) HTTP/1.0\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n"
    for (k, v) in headers { head += "\(k): \(v)\r\n" }
    if method == "POST" { head += "Content-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\n" }
    head += "\r\n" + body
    writeAll(reader.fd, Array(head.utf8))
    _ = reader.waitForClose(timeout: timeout)
    return try parseReply(reader.bytes)
}

func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var off = 0
    while off < bytes.count {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { return }
        off += n
    }
}

struct HTTPParseError: Error, CustomStringConvertible {
    var description: String
}

func parseReply(_ bytes: [UInt8]) throws -> HTTPExchange {
    let sep: [UInt8] = Array("\r\n\r\n".utf8)
    guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == sep }) else {
        throw HTTPParseError(description: "no header end in \(bytes.count) bytes: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
    }
    let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = head[0].split(separator: " ")
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw HTTPParseError(description: "bad status line \(head[0])") }
    var headers: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return HTTPExchange(status: status, headers: headers, body: Array(bytes[(end + 4)...]))
}

/// An open event stream (`GET /events`), read as it comes.
final class EventStreamClient {
    let reader: RawTCPReader

    init(port: Int, watch: String?, headers: [(String, String)] = [], receiveBuffer: Int32? = nil) throws {
        // A small receive buffer has to be set before connecting to take effect on the window.
        if let receiveBuffer {
            reader = try RawTCPReader(port: port, receiveBuffer: receiveBuffer)
        } else {
            reader = try RawTCPReader(port: port)
        }
        let query = watch.map { "?watch=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? ""
        var head = "GET /events\(query) HTTP/1.0\r\nHost: 127.0.0.1:\(port)\r\n"
        for (k, v) in headers { head += "\(k): \(v)\r\n" }
        writeAll(reader.fd, Array((head + "\r\n").utf8))
    }

    /// The status once the header has come.
    func status(timeout: Double = 5) -> Int? {
        reader.read(timeout: timeout) { b in b.count >= 12 }
        guard reader.bytes.count >= 12 else { return nil }
        return Int(String(decoding: reader.bytes[9..<12], as: UTF8.self))
    }

    /// The `data:` lines so far.
    var events: [String] {
        let text = String(decoding: reader.bytes, as: UTF8.self)
        guard let start = text.range(of: "\r\n\r\n") else { return [] }
        return text[start.upperBound...].components(separatedBy: "\n\n").compactMap { e in
            e.hasPrefix("data: ") ? String(e.dropFirst(6)) : nil
        }
    }

    @discardableResult
    func read(timeout: Double, until done: ([String]) -> Bool) -> Bool {
        reader.read(timeout: timeout) { _ in done(self.events) }
    }
}

/// The credential the web rig's file holds.
let webCredential = "test-credential-0123"

/// A whole daemon (the simulated board, online calibration on, the black box in the rig's directory) with the web
/// door on a port of the kernel's choosing and a credential file; `web` adds keys to its section; `gpsEpochs`, the
/// track's length (`DaemonRig`).
func webRig(_ name: String, gps: Bool, gpsEpochs: Int = 600, web: String = "", logger: Logger = testLogger(),
            configure: @escaping (inout AgentConfig) -> Void = { _ in },
            openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus = BusOpener.open) throws -> (DaemonRig, WebDoor) {
    let rig = try DaemonRig(name, gps: gps, gpsEpochs: gpsEpochs, doors: { dir in
        try? "\(webCredential)\n".write(to: dir.appendingPathComponent("web-credential"), atomically: true, encoding: .utf8)
        return """
            web: {port: 0, credential: \(dir.appendingPathComponent("web-credential").path)\(web)}
            calibration: {auto: track, auto_file: \(dir.appendingPathComponent("auto.json").path)}
            blackbox: {directory: \(dir.appendingPathComponent("blackbox").path)}
            """
    }, configure: configure, logger: logger, openBus: openBus)
    guard let door = rig.daemon.doors.compactMap({ $0 as? WebDoor }).first else {
        rig.finish()
        throw NSError(domain: "no web door", code: 1)
    }
    return (rig, door)
}
