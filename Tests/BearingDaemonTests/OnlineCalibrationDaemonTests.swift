import BearingAttitude
import BearingCalibration
import BearingOnlineCalibration
import BearingDaemon
import BearingModel
import BearingSimulator
import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// `calibration.auto` in the whole daemon on the simulator board (its magnetometer behind the demo's hard and
/// soft iron, the board turning at 6 °/s and rolling): a kept online calibration is in force from the start,
/// a nonsense one is refused naming what is wrong, and the daemon learns the iron by itself and keeps it.
final class OnlineCalibrationDaemonTests: XCTestCase {
    /// The simulator's distortion (`VirtualCompass.demo`), chip axes.
    static let hardIron = Vector3(21.0, -9.5, 6.0)

    /// The heading error a calibration leaves on the simulator board (`BusOpener`'s: turning at 6 °/s, pitching
    /// ±5°, rolling ±12°) with the demo's distortion, noise-free, over a minute at 10 Hz.
    static func headingError(_ calibration: MagneticCalibration) -> (rms: Double, largest: Double) {
        let demo = VirtualCompass.demo(clock: { 0 })
        let board = VirtualIMU.board(earth: demo.earthField, heading: { 6 * $0 },
                                     pitch: { 5 * sin(2 * .pi * $0 / 7) }, roll: { 12 * sin(2 * .pi * $0 / 5) })
        let errors = (0..<600).map { k -> Double in
            let t = Double(k) / 10
            let raw = demo.softIron * board.sensed(at: t).field + demo.hardIron
            let enu = board.truth(at: t).rotate(calibration.apply(raw))
            return atan2(enu.x, enu.y) * 180 / .pi
        }
        return ((errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot(), errors.map(abs).max()!)
    }

    func online(_ objects: [[String: Any]]) -> [String: Any]? {
        objects.last { cls($0) == "CALIBRATION" }?["online"] as? [String: Any]
    }

    func testAKeptOnlineCalibrationIsInForceFromTheStart() throws {
        let rig = try DaemonRig("online-kept", gps: false, configure: { c in
            let soft = Matrix3([1.08, 0.04, 0], [0.04, 0.93, 0.02], [0, 0.02, 1.0]).inverse!
            let rows = soft.rows.map { "[\($0.x),\($0.y),\($0.z)]" }.joined(separator: ",")
            let text = #"{"format":"bearing-online-calibration-1","chip":"qmc5883l","offset":[21,-9.5,6],"matrix":[\#(rows)],"#
                + #""field":57.0,"baseline":null,"time":"2026-11-27T00:00:00.000Z","regions":40,"steps":0}"#
            try? text.write(toFile: c.autoCalibrationPath, atomically: true, encoding: .utf8)
        })
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
        let o = try XCTUnwrap(online(objects), "CALIBRATION has no online object: \(objects.filter { cls($0) == "CALIBRATION" })")
        XCTAssertEqual(o["mode"] as? String, "track")
        XCTAssertEqual(o["source"] as? String, "auto")
        XCTAssertNil(o["error"])
        XCTAssertEqual(objects.last { cls($0) == "ATT" }?["mag_st"] as? String, "N", "the kept calibration corrects the field")
        // What is in force is told from the start, not from its first change: its field, offset and matrix, and no
        // `changed` (nothing has changed since it was put in force).
        client.send("?CALIBRATION;\n")
        let told = try XCTUnwrap(online(client.collect(timeout: 5) { cls($0) == "CALIBRATION" }), "no CALIBRATION answered")
        XCTAssertEqual(try XCTUnwrap(told["field"] as? Double, "\(told)"), 57.0, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(told["offset"] as? [Double], "\(told)"), [21, -9.5, 6])
        XCTAssertEqual(try XCTUnwrap(told["matrix"] as? [[Double]], "\(told)").count, 3)
        XCTAssertNotNil(told["quality"] as? String, "\(told)")
        XCTAssertNil(told["changed"], "nothing changed since it was put in force: \(told)")
        XCTAssertEqual(told["kept"] as? String, "2026-11-27T00:00:00.000Z", "when the kept calibration was learnt: \(told)")
    }

    /// What was learnt on one sensor is never used on another: an online calibration kept by a run on a Pi's
    /// QMC5883L at /dev/i2c-1 is set aside (renamed, named in the journal and in CALIBRATION) when the daemon finds
    /// the simulator's, and nothing is in force; one learnt on this very sensor (the rig names no board) stays in force.
    func testALearntCalibrationFromAnotherSensorIsSetAsideAndNeverUsed() throws {
        let soft = Matrix3([1.08, 0.04, 0], [0.04, 0.93, 0.02], [0, 0.02, 1.0]).inverse!
        let rows = soft.rows.map { "[\($0.x),\($0.y),\($0.z)]" }.joined(separator: ",")
        func text(board: String, device: String) -> String {
            #"{"format":"bearing-online-calibration-1","chip":"qmc5883l","offset":[21,-9.5,6],"matrix":[\#(rows)],"#
                + #""field":48.7,"baseline":null,"time":"2026-11-27T00:00:00.000Z","regions":40,"steps":0,"#
                + #""sensor":{"board":\#(board.isEmpty ? "null" : "\"\(board)\""),"device":"\#(device)","chip":"qmc5883l"}}"#
        }
        for (name, board, device, kept) in [("online-other", "rpi-4b", "i2c:/dev/i2c-1:0x0d", false),
                                            ("online-same", "", "i2c:simulator:0x0d", true)] {
            var path = ""
            let log = LogCapture()
            let rig = try DaemonRig(name, gps: false, configure: { c in
                path = c.autoCalibrationPath
                try? text(board: board, device: device).write(toFile: path, atomically: true, encoding: .utf8)
            }, logger: log.logger)
            defer { rig.finish() }
            let client = try SocketClient(path: rig.socketPath)
            client.watch()
            // The ATT of a second or so: the first sample named the sensor.
            var objects = client.collect(timeout: 10) { cls($0) == "ATT" }
            objects += client.collect(timeout: 1.5) { _ in false }
            let o = try XCTUnwrap(online(objects), "\(name): no online object")
            if kept {
                XCTAssertEqual(o["source"] as? String, "auto", "\(name): learnt on this sensor, it is in force")
                // The kept file's field (48.7 µT, the simulator's) is the magnitude online calibration judges the field
                // by, not WMM's at the fallback (Sydney's 57.0 µT): judged by that, an episode of interference (norm)
                // began within the second, and CALIBRATION told it.
                client.send("?CALIBRATION;\n")
                objects += client.collect(timeout: 2) { cls($0) == "CALIBRATION" }
                let told = objects.compactMap { cls($0) == "CALIBRATION" ? $0["online"] as? [String: Any] : nil }.filter { $0["interference"] != nil }
                XCTAssertTrue(told.isEmpty, "\(name): the field the kept calibration reads is no interference: \(told)")
                XCTAssertTrue(FileManager.default.fileExists(atPath: path))
                continue
            }
            XCTAssertEqual(o["source"] as? String, "none", "\(name): learnt on another sensor, it is not in force: \(o)")
            let error = try XCTUnwrap(o["error"] as? String, "\(name): \(o)")
            XCTAssertTrue(error.contains("i2c:/dev/i2c-1:0x0d") && error.contains("i2c:simulator:0x0d") && error.contains("\(path).set-aside"), error)
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "set aside: the daemon keeps its own learning at the path")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".set-aside"))
            XCTAssertTrue(log.lines.contains { $0.contains("set aside") && $0.contains("rpi-4b") }, log.lines.joined(separator: "\n"))
        }
    }

    func testANonsenseOnlineCalibrationIsRefusedNamingWhatIsWrong() throws {
        var path = ""
        let rig = try DaemonRig("online-nonsense", gps: false, configure: { c in
            path = c.autoCalibrationPath
            let text = #"{"format":"bearing-online-calibration-1","offset":[21,-9.5,6],"matrix":[[1,0,0],[0,1,0],[0,0,-1]],"#
                + #""baseline":null,"time":"2026-11-27T00:00:00.000Z","regions":40,"steps":0}"#
            try? text.write(toFile: path, atomically: true, encoding: .utf8)
        })
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
        let o = try XCTUnwrap(online(objects))
        let error = try XCTUnwrap(o["error"] as? String)
        XCTAssertTrue(error.contains(path) && error.contains("\"matrix\" has determinant -1"), error)
        XCTAssertEqual(o["source"] as? String, "none", "nothing in force: the file was refused")
        XCTAssertEqual(objects.last { cls($0) == "ATT" }?["mag_st"] as? String, "C")
    }

    /// A car's deviation learnt from driving, kept by an earlier run under the calibration in force (none
    /// here), is in ATT from the first attitude, before any fix, and CALIBRATION names the forward axis kept with it;
    /// one edited into nonsense is refused, named, and the daemon runs without it.
    func testTheDeviationFromDrivingKeptByAnEarlierRunIsInForceFromTheStart() throws {
        var p = PassiveDeviation()
        for k in 0..<600 {
            let compass = Double(k * 7 % 360)
            p.add(compass: compass, track: compass + 3 + 2 * sin(compass * .pi / 180), speed: 12, turnRate: 0, eps: 0.2, variation: 0)
        }
        // With the vehicle's forward axis learnt on the same drives: the board across the car.
        let good = String(decoding: DrivingDeviationRecord(p, after: .identity, time: "2026-11-27T10:00:00.000Z", forward: Vector3(0, -1, 0)).encoded(),
                          as: UTF8.self)
        for (name, text) in [("driving-kept", good), ("driving-nonsense", good.replacingOccurrences(of: "bearing-driving-deviation-1", with: "bearing-driving-deviation-9"))] {
            var path = ""
            let rig = try DaemonRig(name, gps: false, configure: { c in
                c.vehicle = .car
                c.calibration.auto = .off
                path = c.drivingDeviationPath
                try? text.write(toFile: path, atomically: true, encoding: .utf8)
            })
            defer { rig.finish() }
            let client = try SocketClient(path: rig.socketPath)
            client.watch()
            let objects = client.collect(timeout: 10) { cls($0) == "ATT" }
            let a = try XCTUnwrap(objects.last { cls($0) == "ATT" }, "\(name): no ATT")
            let driving = try XCTUnwrap(objects.last { cls($0) == "CALIBRATION" }?["driving"] as? [String: Any], "CALIBRATION's driving")
            XCTAssertEqual(driving["file"] as? String, path)
            if name == "driving-kept" {
                XCTAssertEqual(driving["status"] as? String, "active")
                XCTAssertEqual(driving["sectors"] as? Int, 12)
                XCTAssertEqual(driving["forward"] as? [Double], [0, -1, 0], "the forward axis kept")
                // The board across the car: ATT's deviation carries the turn from the heading of the board's x to the
                // heading of the car's forward axis, its −y (`AttitudeFusion.mountingAxis`): −90° for a level board,
                // a little more or less as the simulated board tilts, here from ATT's own angles (the board's: no fix at
                // speed here has shown the car's "up", `AttitudeFusion.vehicleUp`); and the deviation kept
                // at the car's compass heading (ATT's magnetic heading less it), as learnt.
                let q = AttitudeAngles(heading: try XCTUnwrap(a["heading"] as? Double), pitch: try XCTUnwrap(a["pitch"] as? Double),
                                       roll: try XCTUnwrap(a["roll"] as? Double)).quaternion(body: .forwardRightDown)
                let car = q.rotate(Vector3(0, -1, 0)), board = q.rotate(Vector3(1, 0, 0))
                let turn = SwingSolver.wrap180((atan2(car.x, car.y) - atan2(board.x, board.y)) * 180 / .pi)
                XCTAssertEqual(turn, -90, accuracy: 15, "ATT: \(a)")
                let d = try XCTUnwrap(a["deviation"] as? Double, "ATT: \(a)") - turn
                let compass = try XCTUnwrap(a["mheading"] as? Double) - d
                XCTAssertEqual(d, try XCTUnwrap(p.deviation(atCompassHeading: Compass.normalize(compass))), accuracy: 0.05)
            } else {
                XCTAssertNil(a["deviation"], "a refused file puts nothing in force")
                XCTAssertEqual(driving["status"] as? String, "none")
                let error = try XCTUnwrap(driving["error"] as? String)
                XCTAssertTrue(error.contains(path) && error.contains("bearing-driving-deviation-9"), error)
            }
        }
    }

    /// Slow (the first fit, 40–60 s in, then the first fix): a calibration the daemon learnt before its first fix, at
    /// the fallback position's field (the rig's Sydney, 57.0 µT), is scaled at the fix to WMM's field there (gpsfake's
    /// track in the Solent, 48.8 µT), told as a change of its own: `scaled` in CALIBRATION's history, a line in the
    /// journal, the kept file rewritten, the compass quality the fit's own (the field no longer making it "poor"). The
    /// same offset, the matrix scaled in
    /// proportion (the heading the same). So is it by a second daemon started from the file the first kept, before
    /// any fix (a board restarted before its receiver's first fix). Before 2026-12-07 the field stayed judged by
    /// Sydney's 57.0 µT for good, in both.
    func testACalibrationLearntBeforeTheFirstFixIsScaledToTheFixsField() throws {
        let log = LogCapture()
        let rig = try DaemonRig("online-scaled", gps: true, gpsEpochs: 1200, logger: log.logger, gpsStartsLater: true)
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        let fallback = LocalField.fallback(DaemonRig.fallback, unixSeconds: Date().timeIntervalSince1970).reference.norm
        // Before the fix: a fit scaled to the fallback's field.
        let first = try XCTUnwrap(learnt(client, until: Date().addingTimeInterval(150)) { $0["changed"] != nil },
                                  "no CALIBRATION with a learnt calibration in 150 s")
        XCTAssertEqual(try XCTUnwrap(first["field"] as? Double), fallback, accuracy: 0.05, "scaled to the fallback's field")
        XCTAssertEqual(try XCTUnwrap(first["field_wmm"] as? Double), fallback, accuracy: 0.05, "WMM's at the fallback position: no fix yet")
        // The second daemon, from the file the first kept of it (written off the pipeline queue, a moment later).
        let firstOffset = try XCTUnwrap(first["offset"] as? [Double])
        let keptData = try XCTUnwrap(kept(rig) { zip($0.offset, firstOffset).allSatisfy { abs($0 - $1) < 1e-9 } }?.data,
                                     "the first fit was not kept in \(rig.config.autoCalibrationPath)")
        let againLog = LogCapture()
        let again = try DaemonRig("online-scaled-again", gps: true, gpsEpochs: 1200, configure: { c in
            FileManager.default.createFile(atPath: c.autoCalibrationPath, contents: keptData)
        }, logger: againLog.logger, gpsStartsLater: true)
        defer { again.finish() }
        let againClient = try SocketClient(path: again.socketPath)
        againClient.watch()
        _ = againClient.collect(timeout: 10) { cls($0) == "ATT" }
        // In force from the start: what the file holds (CALIBRATION tells a calibration's numbers from its first change).
        let record = try OnlineCalibrationRecord.decode(keptData, source: "kept")
        XCTAssertEqual(try XCTUnwrap(record.field), fallback, accuracy: 0.05, "kept at the fallback's field")
        let kept2: [String: Any] = ["field": try XCTUnwrap(record.field), "offset": record.offset, "matrix": record.matrix]
        try scaledAtTheFirstFix(rig, client, log, before: first, fallback: fallback, "the daemon that learnt it")
        try scaledAtTheFirstFix(again, againClient, againLog, before: kept2, fallback: fallback, "a daemon started from its kept file")
    }

    /// The online calibration of the latest CALIBRATION whose online calibration is learnt (`source` "auto") and `stop`
    /// says so of, read until `deadline` (nil: none).
    func learnt(_ client: SocketClient, until deadline: Date, _ stop: ([String: Any]) -> Bool) -> [String: Any]? {
        while Date() < deadline {
            if let line = client.readLine(timeout: 1), let o = jsonObject(line), cls(o) == "CALIBRATION",
               let online = o["online"] as? [String: Any], online["source"] as? String == "auto", stop(online) { return online }
        }
        return nil
    }

    /// The compass quality CALIBRATION's online object `o` should give with the field WMM's at the fix: what the fit
    /// gives by itself (its misfit, its dip against WMM's, interference going on: `OnlineMagnetometerCalibration.quality`),
    /// the field adding nothing. A first fit from part of a turn may be "poor" by itself on a busy machine (CI,
    /// 2026-12-07: its dip 7.3° off WMM's), so a test asserts this, not "not poor".
    func fitsOwnQuality(_ o: [String: Any]) -> String {
        guard let misfit = o["misfit_percent"] as? Double else { return "unknown" }
        let dipOff = (o["dip"] as? Double).flatMap { d in (o["dip_wmm"] as? Double).map { abs(d - $0) } } ?? 0
        let worst = max(misfit + (o["dip_spread"] as? Double ?? 0), dipOff, o["interference"] == nil ? 0 : 6)
        return worst < 3 ? "good" : worst < 6 ? "fair" : "poor"
    }

    /// The rig's kept online calibration once it is one `matches` says of, read for up to 5 s: the file is written off
    /// the pipeline queue, a moment after the CALIBRATION that tells the change (nil: not by then).
    func kept(_ rig: DaemonRig, _ matches: (OnlineCalibrationRecord) -> Bool) -> (record: OnlineCalibrationRecord, data: Data)? {
        for _ in 0..<50 {
            if let data = FileManager.default.contents(atPath: rig.config.autoCalibrationPath),
               let record = try? OnlineCalibrationRecord.decode(data, source: rig.config.autoCalibrationPath), matches(record) {
                return (record, data)
            }
            usleep(100_000)
        }
        return nil
    }

    /// Starts the rig's gpsd and checks that its calibration in force, scaled to `fallback` (`first`, or a later one
    /// before the fix), is scaled at the first fix to WMM's field there, as a change of its own.
    func scaledAtTheFirstFix(_ rig: DaemonRig, _ client: SocketClient, _ log: LogCapture, before first: [String: Any],
                             fallback: Double, _ name: String) throws {
        try rig.startGPS()
        // At the fix: scaled to WMM's there, a change of its own (the first CALIBRATION whose field is another); the
        // latest before it (a refinement may come before gpsd's first fix) is the one scaled.
        var before = first
        let after = try XCTUnwrap(learnt(client, until: Date().addingTimeInterval(60)) { o in
            guard abs((o["field"] as? Double ?? fallback) - fallback) > 0.05 else { before = o; return false }
            return true
        }, "\(name): no CALIBRATION with another field in the 60 s after gpsfake started")
        print("daemon (\(name)), before the first fix: \(before)\ndaemon (\(name)), scaled at the first fix: \(after)")
        let wmm = try XCTUnwrap(after["field_wmm"] as? Double, "\(name): WMM's field at the fix")
        XCTAssertGreaterThan(abs(wmm - fallback), 5, "\(name): WMM's field at a fix in the Solent, not Sydney's")
        let field = try XCTUnwrap(after["field"] as? Double)
        XCTAssertEqual(field, wmm, accuracy: 0.01, name)
        // Judged by Sydney's 57.0 µT, the field was 17 % over WMM's at the fix, which alone made the quality "poor" for good.
        XCTAssertEqual(after["quality"] as? String, fitsOwnQuality(after), "\(name): judged by WMM's field at the fix")
        // The same offset; the matrix × WMM's at the fix / the fallback's (the field it was scaled to).
        let ratio = field / (before["field"] as! Double)
        let offset = try XCTUnwrap(after["offset"] as? [Double]), offsetBefore = try XCTUnwrap(before["offset"] as? [Double])
        XCTAssertEqual(offset.count, 3, name)
        for (o, b) in zip(offset, offsetBefore) { XCTAssertEqual(o, b, accuracy: 1e-9, "\(name): \(offset) against \(offsetBefore)") }
        let rows = try XCTUnwrap(after["matrix"] as? [[Double]]), rowsBefore = try XCTUnwrap(before["matrix"] as? [[Double]])
        for (row, rowBefore) in zip(rows, rowsBefore) {
            for (m, b) in zip(row, rowBefore) { XCTAssertEqual(m, b * ratio, accuracy: 1e-3 * abs(b) + 1e-9, "\(name): \(rows) against \(rowsBefore) × \(ratio)") }
        }
        // Told as a change of its own: in the history, for any client, and in the journal.
        client.send(#"?CALIBRATION={"points":true};"# + "\n")
        let detail = client.collect(timeout: 5) { cls($0) == "CALIBRATION" && ($0["online"] as? [String: Any])?["history"] != nil }.last
        let history = ((detail?["online"] as? [String: Any])?["history"] as? [[String: Any]])?.compactMap { $0["event"] as? String } ?? []
        XCTAssertEqual(history.filter { $0 == "scaled" }.count, 1, "\(name): \(history)")
        XCTAssertEqual(log.lines.filter { $0.contains("magnetometer calibration scaled by") }.count, 1, "\(name): " + log.lines.joined(separator: "\n"))
        // Kept scaled.
        let record = try XCTUnwrap(kept(rig) { abs(($0.field ?? 0) - field) <= 0.01 }?.record,
                                   "\(name): the online calibration was not kept scaled in \(rig.config.autoCalibrationPath)")
        XCTAssertEqual(try XCTUnwrap(record.field), field, accuracy: 0.01, "\(name): the kept file's field is WMM's at the fix")
        XCTAssertEqual(try XCTUnwrap(record.fieldWMM), wmm, accuracy: 0.01, name)
    }

    /// Slow (most of a turn of the simulated board, 50–90 s): the daemon learns the simulator's iron, says so in
    /// CALIBRATION, and keeps it in its file. Its fixes come from gpsfake's track in the Solent, where WMM's field is
    /// about the simulator's (19.6 µT north, 44.6 down: 48.7 µT), far from the rig's fallback position (Sydney, 57.0 µT):
    /// the fix's field is the magnitude the fits scale to, not the fallback's (which it was until 2026-12-07, every fit
    /// then scaling the field 17 % over WMM's at the fix, and the compass quality "poor" for good).
    func testTheDaemonLearnsTheBoardsIronAndKeepsIt() throws {
        let rig = try DaemonRig("online-learn", gps: true, gpsEpochs: 1200)
        defer { rig.finish() }
        let client = try SocketClient(path: rig.socketPath)
        client.watch()
        // The first fit comes from part of a turn (40–60 s in); a later one may refine it (a fit is taken only
        // when it explains the field better): the test ends at the first refinement, or 32 s after the first fit.
        var learnt: [String: Any]?
        var changes: Set<String> = []
        var deadline = Date().addingTimeInterval(150)
        while Date() < deadline && changes.count < 2 {
            if let line = client.readLine(timeout: 1), let o = jsonObject(line), cls(o) == "CALIBRATION",
               let online = o["online"] as? [String: Any], online["source"] as? String == "auto" {
                if learnt == nil { deadline = Date().addingTimeInterval(32) }
                learnt = online
                if let changed = online["changed"] as? String { changes.insert(changed) }
            }
        }
        let o = try XCTUnwrap(learnt, "no CALIBRATION with a learnt calibration in 150 s")
        print("daemon, online calibration learnt: \(o)")
        XCTAssertEqual(o["mode"] as? String, "track")
        XCTAssertNotNil(o["changed"] as? String)
        XCTAssertLessThan(try XCTUnwrap(o["residual"] as? Double), 2, "µT")
        // WMM's at the fix, not the fallback's; and the magnitude the fits scale to.
        let fallback = LocalField.fallback(DaemonRig.fallback, unixSeconds: Date().timeIntervalSince1970).reference.norm
        XCTAssertGreaterThan(abs(try XCTUnwrap(o["field_wmm"] as? Double) - fallback), 5, "WMM's field at a fix")
        XCTAssertEqual(try XCTUnwrap(o["field_wmm"] as? Double), try XCTUnwrap(o["field"] as? Double), accuracy: 0.01)
        XCTAssertEqual(o["quality"] as? String, fitsOwnQuality(o), "the field is WMM's at the fix: it makes the quality no worse")
        let offset = try XCTUnwrap(o["offset"] as? [Double])
        XCTAssertEqual(offset[0], Self.hardIron.x, accuracy: 2)
        XCTAssertEqual(offset[1], Self.hardIron.y, accuracy: 2)
        // What matters is the heading: the learnt calibration on the simulator's own motion over a minute.
        let rows = try XCTUnwrap(o["matrix"] as? [[Double]])
        let fitted = MagneticCalibration(offset: Vector3(offset[0], offset[1], offset[2]),
                                         matrix: Matrix3(rows[0], rows[1], rows[2]))
        let heading = Self.headingError(fitted)
        print("daemon, online calibration learnt (\(changes.count) change\(changes.count == 1 ? "" : "s")): heading RMS \(heading.rms)°, largest \(heading.largest)° over the board's motion")
        // A refinement has seen more of the turn than the first fit, which comes from part of one; on a busy machine the
        // refinement may not come within the 32 s. Measured: refined 0.30–0.65°; a first fit alone 1.15° (CI, 2026-12-01).
        XCTAssertLessThan(heading.rms, changes.count >= 2 ? 1.0 : 1.8, "\(changes.count) change(s)")
        // Kept.
        let record = try XCTUnwrap(kept(rig) { abs($0.offset[0] - offset[0]) <= 1e-9 }?.record,
                                   "the online calibration was not kept in \(rig.config.autoCalibrationPath)")
        XCTAssertEqual(record.offset[0], offset[0], accuracy: 1e-9)
        XCTAssertNil(record.baseline)
        XCTAssertEqual(record.chip, "qmc5883l")
    }
}
