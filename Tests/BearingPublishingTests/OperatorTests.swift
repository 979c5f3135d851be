import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingDaemon
import CombineSchedulers
import OpenCombine
import OpenCombineDispatch
import XCTest

/// The operators added with per-client chains, under virtual time; and the operator table's rules.
final class OperatorTests: XCTestCase {
    typealias Virtual = TestScheduler<DispatchQueue.OCombine.SchedulerTimeType, DispatchQueue.OCombine.SchedulerOptions>

    func fix(_ second: Int64, lat: Double = 50, lon: Double = -1, speed: Double? = nil, track: Double? = nil) -> Report {
        var f = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_700_000_000 + second), latitude: lat, longitude: lon)
        f.speed = speed
        f.track = track
        return Report(.fix(f))
    }

    func att(_ second: Int64, heading: Double) -> Report {
        Report(.attitude(Attitude(time: GPSTimestamp(seconds: 1_700_000_000 + second), device: "i2c:test", heading: heading,
                                  magneticHeading: heading, field: Vector3(20, 0, 40), dip: 63, magStatus: "N",
                                  declination: 0, declinationSource: .fix)))
    }

    /// Runs `chain` over reports sent by `body`; returns the seconds (since the base) of what came out.
    func run(_ chain: [OperatorSpec], _ stream: StreamClass = .tpv,
             _ body: (PassthroughSubject<Report, Never>, Virtual) -> Void) -> [Int64] {
        let scheduler = Virtual(now: .init(.init(uptimeNanoseconds: 1_000_000_000)))
        let subject = PassthroughSubject<Report, Never>()
        var out: [Int64] = []
        let c = Pipeline.build(subject.eraseToAnyPublisher(), chain, for: stream, scheduler: scheduler)
            .sink { out.append($0.time.map { $0.seconds - 1_700_000_000 } ?? -1) }
        body(subject, scheduler)
        c.cancel()
        return out
    }

    func testSampleKeepsEveryNthStartingWithTheFirst() {
        let out = run([.sample(every: 3)]) { s, _ in for i in 0..<10 { s.send(fix(Int64(i))) } }
        XCTAssertEqual(out, [0, 3, 6, 9])
    }

    func testDebounceWaitsForQuiet() {
        let out = run([.debounce(interval: 1)]) { s, sched in
            s.send(fix(0)); sched.advance(by: .milliseconds(400))
            s.send(fix(1)); sched.advance(by: .milliseconds(400))
            s.send(fix(2)); sched.advance(by: .milliseconds(999))
            XCTAssertTrue(true)
            sched.advance(by: .milliseconds(1))
            s.send(fix(3)); sched.advance(by: .seconds(2))
        }
        XCTAssertEqual(out, [2, 3], "the last of each burst, once quiet for 1 s")
    }

    func testDeadbandMetersWithHeartbeat() {
        // 0.0001° of latitude ≈ 11.1 m.
        let out = run([.deadband(.init(.meters(20), heartbeat: 10))]) { s, sched in
            s.send(fix(0, lat: 50)); sched.advance(by: .seconds(1))
            s.send(fix(1, lat: 50.0001)); sched.advance(by: .seconds(1))   // 11 m: held back
            s.send(fix(2, lat: 50.0002)); sched.advance(by: .seconds(1))   // 22 m from the last published: out
            s.send(fix(3, lat: 50.0002)); sched.advance(by: .seconds(9))   // still, 1 s after the last
            s.send(fix(12, lat: 50.0002)); sched.advance(by: .seconds(1))  // still, but 10 s of silence: heartbeat
            s.send(fix(13, lat: 50.0002))
        }
        XCTAssertEqual(out, [0, 2, 12])
    }

    func testDeadbandDegreesWrapsAroundNorth() {
        let out = run([.deadband(.init(.degrees(5)))], .att) { s, _ in
            s.send(att(0, heading: 358)); s.send(att(1, heading: 2)); s.send(att(2, heading: 4)); s.send(att(3, heading: 350))
        }
        XCTAssertEqual(out, [0, 2, 3], "358→2 is 4°, 358→4 is 6°, 4→350 is 14°")
    }

    func testDeadbandFieldAndAMissingValuePasses() {
        let out = run([.deadband(.init(.field("speed", change: 0.5)))]) { s, _ in
            s.send(fix(0, speed: 1)); s.send(fix(1, speed: 1.4)); s.send(fix(2, speed: 1.6)); s.send(fix(3)); s.send(fix(4))
        }
        XCTAssertEqual(out, [0, 2, 3], "a fix without speed after one with it is news; two without are not")
    }

    func testFieldsKeepsOnlyTheNamedOnesAndClass() {
        let scheduler = Virtual(now: .init(.init(uptimeNanoseconds: 1)))
        let subject = PassthroughSubject<Report, Never>()
        var lines: [String] = []
        let c = Pipeline.build(subject.eraseToAnyPublisher(), [.fields(["time", "lat", "lon", "speed"]), .fields(["lat", "lon"])],
                               for: .tpv, scheduler: scheduler).sink { lines.append($0.line) }
        subject.send(fix(0, speed: 2))
        c.cancel()
        XCTAssertEqual(lines, [#"{"class":"TPV","lat":50.000000000,"lon":-1.000000000}"#], "two fields operators intersect")
    }

    func testFieldsOnARelayedObjectFiltersGpsdsLine() throws {
        let line = #"{"class":"ATT","device":"/dev/pts/1","heading":10.000,"pitch":1.50,"roll":-2.00}"#
        let r = try XCTUnwrap(RelayedObject(line: line))
        XCTAssertEqual(Report(.relayed(r)).line, line, "verbatim without fields")
        XCTAssertEqual(Report(.relayed(r)).keeping(["heading"]).line, #"{"class":"ATT","heading":10}"#)
    }

    func testDedupeByTimeNeverDropsTimelessValues() throws {
        let r = try XCTUnwrap(RelayedObject(line: #"{"class":"ATT","device":"d","heading":1.000}"#))
        let out = run([.dedupe(.time)], .att) { s, _ in s.send(Report(.relayed(r))); s.send(Report(.relayed(r))) }
        XCTAssertEqual(out.count, 2, "gpsd 3.22's ATT has no time; each is a new one")
    }

    func testSmoothLeavesGpsdsATTAlone() throws {
        let r = try XCTUnwrap(RelayedObject(line: #"{"class":"ATT","device":"d","heading":1.000}"#))
        let out = run([.smooth(samples: 4)], .att) { s, _ in s.send(Report(.relayed(r))); s.send(att(5, heading: 10)) }
        XCTAssertEqual(out, [-1, 5], "gpsd's (timeless) ATT as it came, the compass's smoothed")
    }

    func testTheTableDecidesWhatAppliesWhere() {
        XCTAssertTrue(OperatorSpec.minMode(.twoD).applies(to: .tpv))
        XCTAssertFalse(OperatorSpec.minMode(.twoD).applies(to: .att))
        XCTAssertFalse(OperatorSpec.dedupe(.position).applies(to: .sky))
        XCTAssertTrue(OperatorSpec.deadband(.init(.degrees(2))).applies(to: .att))
        XCTAssertFalse(OperatorSpec.deadband(.init(.meters(2))).applies(to: .att))
        for c in StreamClass.allCases {
            XCTAssertTrue(OperatorSpec.throttle(interval: 1, latest: true).applies(to: c))
            XCTAssertTrue(OperatorSpec.sample(every: 2).applies(to: c))
        }
        XCTAssertEqual(Set(OperatorSpec.table.map(\.name)), Set(OperatorSpec.names))
    }

    func testParsingNewOperatorsAndTheirErrors() throws {
        func spec(_ json: String) throws -> OperatorSpec { try OperatorSpec(try JSONValue.parse(json), path: "p[0]") }
        XCTAssertEqual(try spec(#"{"op":"sample","every":5}"#), .sample(every: 5))
        XCTAssertEqual(try spec(#"{"op":"debounce","interval":0.5}"#), .debounce(interval: 0.5))
        XCTAssertEqual(try spec(#"{"op":"deadband","meters":10,"heartbeat":60}"#), .deadband(.init(.meters(10), heartbeat: 60)))
        XCTAssertEqual(try spec(#"{"op":"deadband","field":"speed","change":0.5}"#), .deadband(.init(.field("speed", change: 0.5))))
        XCTAssertEqual(try spec(#"{"op":"fields","keep":["lat","lon"]}"#), .fields(["lat", "lon"]))
        for s: OperatorSpec in [.sample(every: 5), .debounce(interval: 0.5), .deadband(.init(.degrees(3), heartbeat: 9)),
                                .deadband(.init(.field("hdop", change: 1))), .fields(["time"])] {
            XCTAssertEqual(try OperatorSpec(s.value, path: "x"), s, "\(s.json) reads back")
        }
        let cases: [(String, String)] = [
            (#"{"op":"sample","every":0}"#, "p[0] (sample).every: 0 is not allowed; a whole number from 1 to 1000000"),
            (#"{"op":"deadband","meters":1,"degrees":2}"#, "p[0] (deadband): give exactly one of meters, degrees or field (with change); got 2"),
            (#"{"op":"deadband","field":"speed"}"#, "p[0] (deadband).change: required for deadband"),
            (#"{"op":"fields","keep":[]}"#, "p[0] (fields).keep: required, a non-empty list of field names such as [\"time\",\"lat\",\"lon\"]"),
            (#"{"op":"fields","keep":[3]}"#, "p[0] (fields).keep[0]: expected a field name, got 3"),
            (#"{"op":"debounce","interval":-1}"#, "p[0] (debounce).interval: -1 is not allowed; seconds, > 0 and ≤ 86400"),
            (#"{"op":"throttle","interval":1,"every":2}"#, "p[0] (throttle).every: unknown parameter for throttle; allowed: interval, latest"),
        ]
        for (json, message) in cases {
            XCTAssertThrowsError(try spec(json), json) { XCTAssertEqual("\($0)", message) }
        }
    }

    func testChainErrorsNameClassIndexOperatorAndField() {
        func chains(_ json: String) throws -> [StreamClass: [OperatorSpec]] { try NamedPipeline.chains(try JSONValue.parse(json), path: "pipelines") }
        XCTAssertThrowsError(try chains(#"{"ATT":[{"op":"throttle","interval":1},{"op":"min_mode","mode":3}]}"#)) {
            XCTAssertEqual("\($0)", #"pipelines.ATT[1]: operator min_mode ({"op":"min_mode","mode":3}) does not apply to ATT; allowed for ATT: dedupe, throttle, sample, debounce, deadband, fields, smooth"#)
        }
        XCTAssertThrowsError(try chains(#"{"TPV":[{"op":"fields","keep":["lat","latitude"]}]}"#)) {
            XCTAssertTrue("\($0)".hasPrefix(#"pipelines.TPV[0].keep: "latitude" is not a TPV field; allowed: device, status, mode, time"#), "\($0)")
        }
        XCTAssertThrowsError(try chains(#"{"SKY":[{"op":"deadband","field":"satellites","change":1}]}"#)) {
            XCTAssertTrue("\($0)".hasPrefix(#"pipelines.SKY[0].field: "satellites" is not a numeric SKY field"#), "\($0)")
        }
        XCTAssertThrowsError(try chains(#"{"XYZ":[]}"#)) {
            XCTAssertEqual("\($0)", "pipelines.XYZ: not a class with a chain; allowed: TPV, SKY, ATT, GST, PPS, TOFF")
        }
    }
}
