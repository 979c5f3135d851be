import BearingCalibration
import BearingDaemon
import BearingModel
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// `calibration.deviation_file` in the whole daemon on the simulator board: a curve in force corrects ATT's
/// headings and says so (`deviation`, CALIBRATION's `deviation`), a nonsense one is refused naming the key, and
/// a curve written while it runs is taken on `?CALIBRATION={"reload":true};`.
final class DeviationFileDaemonTests: XCTestCase {
    static func record(_ coefficients: [Double]) -> String {
        #"{"format":"bearing-deviation-1","coefficients":[\#(coefficients.map { "\($0)" }.joined(separator: ","))],"#
            + #""time":"2026-11-27T00:00:00.000Z","source":"swing"}"#
    }

    func deviation(_ objects: [[String: Any]]) -> [String: Any]? {
        objects.last { cls($0) == "CALIBRATION" }?["deviation"] as? [String: Any]
    }

    func testACurveInForceCorrectsTheHeadingAndAReloadTakesANewOne() throws {
        var path = ""
        let rig = try DaemonRig("deviation-kept", gps: false, configure: { c in
            path = c.deviationPath
            try? Self.record([5, 0, 0, 0, 0]).write(toFile: path, atomically: true, encoding: .utf8)
        })
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" && $0["deviation"] != nil }
        let d = try XCTUnwrap(deviation(objects), "no deviation in CALIBRATION")
        XCTAssertEqual(d["status"] as? String, "active")
        XCTAssertEqual(d["file"] as? String, path)
        XCTAssertEqual(d["coefficients"] as? [Double], [5, 0, 0, 0, 0])
        let att = try XCTUnwrap(objects.last { cls($0) == "ATT" })
        XCTAssertEqual(try XCTUnwrap(att["deviation"] as? Double), 5, accuracy: 1e-9)

        // A new curve, reloaded: ATT follows it.
        try Self.record([-3, 0, 0, 0, 0]).write(toFile: path, atomically: true, encoding: .utf8)
        client.send("?CALIBRATION={\"reload\":true};\n")
        let after = client.collect(timeout: 10) { cls($0) == "ATT" && ($0["deviation"] as? Double) == -3 }
        XCTAssertEqual(after.last { cls($0) == "ATT" }?["deviation"] as? Double, -3, "\(after.filter { cls($0) == "CALIBRATION" })")
    }

    func testANonsenseCurveIsRefusedNamingWhatIsWrong() throws {
        var path = ""
        let rig = try DaemonRig("deviation-nonsense", gps: false, configure: { c in
            path = c.deviationPath
            try? Self.record([90, 0, 0, 0, 0]).write(toFile: path, atomically: true, encoding: .utf8)
        })
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
        let d = try XCTUnwrap(deviation(objects))
        let error = try XCTUnwrap(d["error"] as? String)
        XCTAssertTrue(error.contains(path) && error.contains("\"coefficients\"") && error.contains("A = 90"), error)
        XCTAssertEqual(d["status"] as? String, "none")
        XCTAssertNil(objects.last { cls($0) == "ATT" }?["deviation"], "no curve in force")
    }
}
