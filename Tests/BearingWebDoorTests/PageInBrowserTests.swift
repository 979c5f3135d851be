import BearingCalibration
import BearingDaemon
import BearingI2C
import BearingModel
import BearingOnlineCalibration
import BearingPOSIX
import BearingSimulator
import BearingWebDoor
import DaemonTestRig
import Foundation
import TestSupport
import XCTest

/// The page in a real browser: Debian's Chromium, headless, driven by Selenium (`browser/page_check.py`), against
/// a whole daemon (the simulated board, a real gpsd under gpsfake), with the truth read from the UNIX socket by
/// the script itself. Screenshots of each view at phone and desktop size go to `.build/test-output/web/`
/// (docs/web.md shows them).
final class PageInBrowserTests: XCTestCase {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let script = here.appendingPathComponent("browser/page_check.py").path
    static let screenshots = here.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/test-output/web")

    /// Runs page_check.py against the rig's page; `signal` gets each `{"signal": …}` the script prints, as it prints it
    /// (the script waits for what the test does then).
    func check(_ rig: DaemonRig, _ door: WebDoor, expect: String? = nil, screenshots: URL? = nil,
               signal: (String) -> Void = { _ in }) throws {
        for tool in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("SKIPPED: \(tool) missing (apt-get install chromium chromium-driver python3-selenium)")
        }
        var args = ["--url", "http://127.0.0.1:\(door.port)/", "--socket", rig.socketPath,
                    "--credential-file", rig.dir.appendingPathComponent("web-credential").path]
        let shots = screenshots ?? rig.dir.appendingPathComponent("screenshots")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        args += ["--screenshots", shots.path]
        if let expect { args += ["--expect", expect] }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [Self.script] + args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        var output = "", pending = ""
        var checks = 0
        while true {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            pending += String(decoding: data, as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let line = String(pending[..<newline])
                pending = String(pending[pending.index(after: newline)...])
                output += line + "\n"
                guard let o = jsonObject(line) else {
                    print("page_check: \(line)")
                    continue
                }
                if let s = o["signal"] as? String {
                    signal(s)
                    continue
                }
                guard let name = o["check"] as? String else { continue }
                checks += 1
                print("page_check \(name): \(o["ok"] as? Bool == true ? "ok" : "FAILED") \(o["detail"] as? String ?? "")")
                XCTAssertEqual(o["ok"] as? Bool, true, "\(name): \(o["detail"] as? String ?? "")")
            }
        }
        p.waitUntilExit()
        XCTAssertGreaterThan(checks, 0, "page_check.py printed no check: \(output.suffix(2000))")
        XCTAssertEqual(p.terminationStatus, 0, output.suffix(2000).description)
    }

    /// The track lasts as long as the page's checks (gpsd 3.25 plays about ten epochs a second under gpsfake's pace, and
    /// the sky is checked a minute or more in): the sky plot is then compared with live SKYs, not with a track that ended.
    func rig(_ name: String, gps: Bool, configure: @escaping (inout AgentConfig) -> Void = { _ in },
             openBus: @escaping @Sendable (String) throws(I2CError) -> I2CBus = BusOpener.open) throws -> (DaemonRig, WebDoor) {
        try webRig(name, gps: gps, gpsEpochs: 4000, configure: configure, openBus: openBus)
    }

    /// Heading as the socket says, the position, the sky plot, the calibration and deviation views, night mode, actions
    /// refused and done, and the screenshots.
    func testThePageShowsWhatTheSocketSays() throws {
        // A swing's curve in force, with its standard deviations and the current it solved (0.5 m/s setting toward 143°).
        let curve = DeviationRecord(coefficients: [1.25, -2.5, 3.75, 0.5, -0.25], uncertainties: [0.1, 0.2, 0.3, 0.05, 0.04],
                                    time: "2026-12-06T10:00:00.000Z", source: "swing", current: [0.3, -0.4])
        let (rig, door) = try rig("web-browser", gps: true) { c in try? curve.encoded().write(to: URL(fileURLWithPath: c.deviationPath)) }
        defer { rig.finish() }
        try check(rig, door, screenshots: Self.screenshots)
    }

    /// Without gpsd the page says so, and shows no position. A car's, with a deviation from driving kept by an earlier
    /// run after another calibration (so not in force): the deviation plot draws its observations as rings, and no curve.
    func testThePageSaysWhenThereIsNoGPS() throws {
        var driving = PassiveDeviation()
        for k in 0..<600 {
            let compass = Double(k * 7 % 360)
            driving.add(compass: compass, track: compass + 3 + 2 * sin(compass * .pi / 180), speed: 12, turnRate: 0, eps: 0.2, variation: 0)
        }
        let kept = DrivingDeviationRecord(driving, after: MagneticCalibration(offset: Vector3(30, -20, 10), matrix: .identity),
                                          time: "2026-12-06T10:00:00.000Z")
        let (rig, door) = try rig("web-browser-no-gps", gps: false) { c in
            c.vehicle = .car
            try? kept.encoded().write(to: URL(fileURLWithPath: c.drivingDeviationPath))
        }
        defer { rig.finish() }
        try check(rig, door, expect: "no-gps")
    }

    /// The door goes away (the page's stream ends, its port refuses) and comes back 3 s later on the same port: the
    /// page says it is reconnecting and marks its values stale, then reconnects by itself and shows fresh ones.
    func testThePageSaysItIsReconnectingAndComesBack() throws {
        let (rig, door) = try rig("web-browser-reconnect", gps: false)
        defer { rig.finish() }
        var reopened: WebDoor?
        defer { reopened?.close() }
        try check(rig, door, expect: "reconnect") { signal in
            guard signal == "drop-now" else { return }
            var settings = door.settings
            settings.port = door.port
            door.close()
            Thread.sleep(forTimeInterval: 3)
            do {
                reopened = try WebDoor(settings, core: rig.daemon.agent.core, requests: rig.daemon.agent.socketRequests, logger: testLogger())
            } catch {
                XCTFail("the door did not open again on port \(settings.port): \(error)")
            }
        }
        XCTAssertNotNil(reopened)
    }

    /// A magnet brought near the still board (20 µT downwards against Sydney's upward field, as in the daemon's own test
    /// of interference): the calibration view says so and for how long, counting up as the ATTs come while no new
    /// CALIBRATION is published (the page works it out from `interference_since` and the latest ATT's time), the health
    /// view says it too, and both say it no longer once the magnet is taken away.
    func testThePageSaysHowLongTheInterferenceHasGoneOn() throws {
        let board = MagnetBoard(), bus = board.bus
        let (rig, door) = try rig("web-browser-magnet", gps: false, configure: { board.keepCalibration(for: $0) }, openBus: { _ in bus })
        defer { rig.finish() }
        try check(rig, door, expect: "interference") { signal in
            switch signal {
            case "magnet-near": board.magnet.set(Vector3(0, 0, -20))
            case "magnet-away": board.magnet.set(.zero)
            default: XCTFail("page_check.py signalled \(signal)")
            }
        }
    }

    /// Without a magnetometer the page says there is no compass.
    func testThePageSaysWhenThereIsNoCompass() throws {
        let (rig, door) = try rig("web-browser-no-compass", gps: true) { c in
            c.magnetometer.enabled = false
            c.imu.enabled = false
        }
        defer { rig.finish() }
        try check(rig, door, expect: "no-compass")
    }
}
