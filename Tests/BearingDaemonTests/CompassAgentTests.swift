import BearingModel
import BearingAttitude
import BearingSimulator
import BearingDaemon
import Foundation
import DaemonTestRig
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The compass path in the running agent: a chip model on a simulated bus, read by the magnetometer
/// thread, published as ATT on the real socket next to TPVs from a real gpsd (gpsfake).
final class CompassAgentTests: XCTestCase {
    func compassConfig(port: Int, dir: URL) -> AgentConfig {
        var c = makeAgentConfig(gpsdPort: port, dir: dir)
        c.magnetometer.enabled = true
        c.magnetometer.reader.bus = "sim-bus"
        c.magnetometer.reader.chip = "qmc5883l"
        c.magnetometer.reader.settings.rate = 20
        c.magnetometer.reader.retryInitial = 0.05
        c.magnetometer.reader.retryMax = 0.2
        c.magnetometer.orientation = try! Orientation(axes: "+X-Y-Z")
        c.heading.fallbackPosition = Vector3(-33.9, 151.2, 0)  // Sydney: declination ≈ +12.8°
        return c
    }

    /// A board held at 100° true in a field with no east component (so magnetic = true before declination).
    func simulatedBus(heading: Double = 100) -> SimulatedI2CBus {
        let bus = SimulatedI2CBus(path: "sim-bus")
        let compass = VirtualCompass(earthField: Vector3(20, 0, 45), turnRate: 0, startHeading: heading,
                                     orientation: try! Orientation(axes: "+X-Y-Z"), clock: { 0 })
        ChipModels.attach(chip: "qmc5883l", to: bus) { compass.field() }
        return bus
    }

    func start(_ config: AgentConfig, bus: SimulatedI2CBus) throws -> (ServedAgent, SocketClient) {
        let agent = ServedAgent(config: config, logger: testLogger(), openBus: { _ in bus })
        try agent.start()
        let client = try SocketClient(path: agent.socketPath)
        client.watch()
        return (agent, client)
    }

    func testATTNextToTPVWithDeclinationFromTheFallbackThenTheFix() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("compass")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (track, log) = try writeTrack(in: dir) { $0.epochs = 30 }
        let port = freePort()
        let (agent, client) = try start(compassConfig(port: port, dir: dir), bus: simulatedBus())
        defer { agent.stop() }

        // Before any fix: the fallback position's declination.
        let before = client.collect(timeout: 10) { cls($0) == "ATT" }
        let firstATT = try XCTUnwrap(before.last(where: { cls($0) == "ATT" }), "no ATT before the GPS started")
        XCTAssertEqual(firstATT["decl_src"] as? String, "fallback")
        XCTAssertEqual(firstATT["declination"] as? Double ?? .nan, 12.8, accuracy: 0.2)
        XCTAssertEqual(firstATT["mheading"] as? Double ?? .nan, 100, accuracy: 0.2)
        XCTAssertEqual(firstATT["heading"] as? Double ?? .nan, 112.8, accuracy: 0.3)
        XCTAssertEqual(firstATT["mag_st"] as? String, "C", "uncalibrated")
        XCTAssertEqual(firstATT["mag_len"] as? Double ?? .nan, (20.0 * 20 + 45 * 45).squareRoot(), accuracy: 0.1)
        XCTAssertTrue(before.contains { cls($0) == "STATE" && $0["source"] as? String == "magnetometer" && $0["state"] as? String == "connected" })

        // With a fix from gpsd the declination becomes the fix's (the Solent, ≈ +0.9°).
        let fake = try GPSFake(log: log, port: port)
        defer { fake.stop() }
        var sawTPV = false
        let after = client.collect(timeout: 60) { o in
            if cls(o) == "TPV", (o["mode"] as? Int ?? 0) >= 2 { sawTPV = true }
            return sawTPV && cls(o) == "ATT" && o["decl_src"] as? String == "fix"
        }
        XCTAssertTrue(sawTPV, "no TPV with a fix")
        let fixATT = try XCTUnwrap(after.last(where: { cls($0) == "ATT" && $0["decl_src"] as? String == "fix" }), "declination never came from the fix")
        let expected = track.firstFixField.declination.value
        XCTAssertEqual(fixATT["declination"] as? Double ?? .nan, expected, accuracy: 0.05)
        XCTAssertEqual(fixATT["heading"] as? Double ?? .nan, Compass.normalize(100 + expected), accuracy: 0.3)
    }

    func testGPSPathKeepsGoingWhileTheI2CBusFailsAndTheSensorComesBack() throws {
        try requireGpsfake()
        let dir = temporaryDirectory("busfail")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (_, log) = try writeTrack(in: dir) { $0.epochs = 60 }
        let port = freePort()
        let bus = simulatedBus()
        let (agent, client) = try start(compassConfig(port: port, dir: dir), bus: bus)
        defer { agent.stop() }
        let fake = try GPSFake(log: log, port: port)
        defer { fake.stop() }

        _ = client.collect(timeout: 30) { cls($0) == "TPV" }
        bus.unplug(0x0D)
        var tpvsWhileUnplugged = 0
        var magDown = false
        _ = client.collect(timeout: 30) { o in
            if cls(o) == "STATE", o["source"] as? String == "magnetometer", o["state"] as? String == "disconnected" { magDown = true }
            if magDown && cls(o) == "TPV" { tpvsWhileUnplugged += 1 }
            return tpvsWhileUnplugged >= 5
        }
        XCTAssertTrue(magDown, "the lost sensor was not reported on the socket")
        XCTAssertGreaterThanOrEqual(tpvsWhileUnplugged, 5, "TPVs stopped while the I2C bus failed")

        bus.plug(0x0D)
        var attAgain = false
        _ = client.collect(timeout: 30) { o in
            if cls(o) == "ATT" { attAgain = true }
            return attAgain
        }
        XCTAssertTrue(attAgain, "the sensor was not found again after it came back")
    }
}
