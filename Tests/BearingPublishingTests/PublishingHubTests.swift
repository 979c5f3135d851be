import BearingModel
import BearingWire
import BearingPublishing
import BearingPOSIX
import BearingDaemon
import CombineSchedulers
import OpenCombine
import OpenCombineDispatch
import XCTest

/// The hub without sockets: who receives what, from which chain, computed how many times.
final class PublishingHubTests: XCTestCase {
    typealias Virtual = TestScheduler<DispatchQueue.OCombine.SchedulerTimeType, DispatchQueue.OCombine.SchedulerOptions>

    var scheduler: Virtual!
    var delivered: [(line: String, clients: [ClientID])] = []
    var hub: PublishingHub<Virtual>!

    override func setUp() {
        scheduler = Virtual(now: .init(.init(uptimeNanoseconds: 1_000_000_000)))
        delivered = []
        var defaults: [StreamKey: [OperatorSpec]] = [:]
        for key in StreamKey.all { defaults[key] = [] }
        defaults[StreamKey(.tpv, .gpsd)] = [.minMode(.threeD), .throttle(interval: 1, latest: true)]
        hub = PublishingHub(defaults: defaults, named: [NamedPipeline(name: "slow", chains: [.tpv: [.sample(every: 10)]], origin: .config)],
                            release: "test", scheduler: scheduler) { [unowned self] line, clients in delivered.append((line, clients)) }
    }

    func fix(_ second: Int64, mode: FixMode = .threeD) -> Report {
        Report(.fix(GPSFix(mode: mode, time: GPSTimestamp(seconds: 1_700_000_000 + second), latitude: 50, longitude: -1)))
    }

    /// TPV seconds each client received.
    func received(_ client: ClientID) -> [Int64] {
        delivered.filter { $0.clients.contains(client) && $0.line.hasPrefix(#"{"class":"TPV""#) }
            .compactMap { try? WireMessage(line: $0.line).fix?.time?.seconds }.map { $0 - 1_700_000_000 }
    }

    func watch(_ client: ClientID, _ json: String) {
        guard case .watch(let change?) = try! ClientRequest.parse(Substring("?WATCH=" + json)) else { return XCTFail() }
        hub.handle(.watch(change), from: client, now: GPSTimestamp(seconds: 0))
    }

    func testAClientChainStartsFromTheUnfilteredStream() {
        hub.connect(1); hub.connect(2)
        watch(1, #"{"enable":true,"json":true}"#)
        watch(2, #"{"enable":true,"json":true,"pipelines":{"TPV":[{"op":"sample","every":2}]}}"#)
        for i in 0..<6 { hub.publish(fix(Int64(i), mode: i == 2 ? .twoD : .threeD), from: .gpsd); scheduler.advance(by: .milliseconds(400)) }
        scheduler.advance(by: .seconds(2))
        XCTAssertEqual(received(2), [0, 2, 4], "every other fix, including the 2D one the default chain drops")
        XCTAssertEqual(received(1), [0, 1, 4, 5], "the default chain: 3D only, the newest of each second")
    }

    func testNamedChainIsComputedOnceForAllItsClients() {
        for c in 1...50 { hub.connect(c); watch(c, #"{"enable":true,"json":true,"pipeline":"slow"}"#) }
        for c in 51...60 { hub.connect(c); watch(c, #"{"enable":true,"json":true,"pipelines":{"TPV":[{"op":"sample","every":10}]}}"#) }
        XCTAssertEqual(hub.runCount.named, 1, "one run of \"slow\" (it defines TPV only) for 50 clients")
        XCTAssertEqual(hub.runCount.client, 10, "one run per client with chains of its own")
        let before = delivered.count
        for i in 0..<20 { hub.publish(fix(Int64(i)), from: .gpsd) }
        scheduler.advance(by: .seconds(30))
        let tpv = delivered[before...].filter { $0.line.hasPrefix(#"{"class":"TPV""#) }
        // The named run delivers each line once, to all 50; each client run its own.
        XCTAssertEqual(tpv.filter { $0.clients.count == 50 }.count, 2)
        XCTAssertEqual(tpv.filter { $0.clients.count == 1 }.count, 20)
        XCTAssertEqual(received(7), [0, 10])
        for c in 1...50 { hub.disconnect(c) }
        XCTAssertEqual(hub.runCount.named, 0, "the last client gone, the named run ends")
    }

    func testAnUnknownNamedPipelineIsAnErrorAndTheOldOptionsStay() {
        hub.connect(1)
        watch(1, #"{"enable":true,"json":true,"classes":["TPV"]}"#)
        delivered.removeAll()
        watch(1, #"{"pipeline":"fast"}"#)
        XCTAssertEqual(delivered.map(\.line), [#"{"class":"ERROR","message":"WATCH: no pipeline named \"fast\"; defined: slow; the previous options stay in force"}"#])
        hub.handle(.watch(nil), from: 1, now: GPSTimestamp(seconds: 0))
        XCTAssertEqual(delivered.last?.line, #"{"class":"WATCH","enable":true,"json":true,"nmea":false,"raw":0,"scaled":false,"timing":false,"split24":false,"pps":false,"classes":["TPV"]}"#)
    }

    func testRedefiningANamedPipelineSwitchesItsClientsAndRemovingFallsBack() {
        hub.connect(1)
        watch(1, #"{"enable":true,"json":true,"pipeline":"slow"}"#)
        hub.define(NamedPipeline(name: "slow", chains: [.tpv: [.sample(every: 2)]], origin: .client))
        for i in 0..<4 { hub.publish(fix(Int64(i)), from: .gpsd) }
        scheduler.advance()
        XCTAssertEqual(received(1), [0, 2])
        XCTAssertTrue(hub.remove(named: "slow"))
        XCTAssertEqual(hub.runCount.named, 0)
        hub.publish(fix(10), from: .gpsd)
        scheduler.advance(by: .seconds(2))
        XCTAssertEqual(received(1), [0, 2, 10], "back on the default chain")
    }

    /// The fleet's named pipelines: a set replaced whole (a name it drops sends its users to the default
    /// chains, an unchanged one keeps its run), and never a name the config or a local client holds.
    func testTheFleetsNamedPipelinesAreReplacedWholeAndNeverTakeAnotherOriginsName() {
        let coarse = NamedPipeline(name: "coarse", chains: [.tpv: [.sample(every: 3)]], origin: .fleet)
        let every2 = NamedPipeline(name: "every2", chains: [.tpv: [.sample(every: 2)]], origin: .fleet)
        hub.define(NamedPipeline(name: "mine", chains: [.tpv: []], origin: .client))
        XCTAssertNil(hub.fleetConflict([coarse, every2]))
        hub.replaceFleetPipelines([coarse, every2])
        hub.connect(1); hub.connect(2)
        watch(1, #"{"enable":true,"json":true,"pipeline":"coarse"}"#)
        watch(2, #"{"enable":true,"json":true,"pipeline":"every2"}"#)
        for i in 0..<6 { hub.publish(fix(Int64(i)), from: .gpsd) }
        scheduler.advance()
        XCTAssertEqual(received(1), [0, 3])
        XCTAssertEqual(received(2), [0, 2, 4])
        XCTAssertEqual(hub.runCount.named, 2)

        // The next version keeps every2 as it was and drops coarse.
        hub.replaceFleetPipelines([every2])
        XCTAssertNil(hub.named["coarse"])
        XCTAssertEqual(hub.runCount.named, 1, "coarse's run ended; every2's stayed")
        for i in 6..<9 { hub.publish(fix(Int64(i)), from: .gpsd); scheduler.advance(by: .milliseconds(1500)) }
        XCTAssertEqual(received(2), [0, 2, 4, 6, 8], "every2's run went on, its count unbroken")
        XCTAssertEqual(received(1), [0, 3, 6, 7, 8], "coarse's user is on the default chain")

        XCTAssertEqual(hub.fleetConflict([NamedPipeline(name: "slow", chains: [.tpv: []], origin: .fleet)])?.origin, .config)
        XCTAssertEqual(hub.fleetConflict([every2, NamedPipeline(name: "mine", chains: [.tpv: []], origin: .fleet)])?.origin, .client)
        hub.replaceFleetPipelines([])
        XCTAssertEqual(Set(hub.named.keys), ["slow", "mine"], "clearing removes only the fleet's")
        XCTAssertTrue(hub.pipelinesObject().contains(#""name":"mine","origin":"client""#), hub.pipelinesObject())
    }

    func testStateAndCalibrationAreReplayedOnWatchAndMAGIsOptIn() {
        hub.publishState(source: "gpsd", line: #"{"class":"STATE","source":"gpsd","state":"connected"}"#)
        hub.publishCalibration(#"{"class":"CALIBRATION","status":"none"}"#)
        hub.connect(1)
        hub.connect(2)
        watch(1, #"{"enable":true,"json":true}"#)
        watch(2, #"{"enable":true,"json":true,"classes":["MAG"]}"#)
        let to1 = delivered.filter { $0.clients == [1] }.map { try! WireMessage(line: $0.line).className }
        XCTAssertEqual(to1, ["VERSION", "DEVICES", "WATCH", "STATE", "CALIBRATION"])
        delivered.removeAll()
        hub.publishMAG(#"{"class":"MAG","x":1}"#)
        XCTAssertEqual(delivered.map(\.clients), [[2]])
        XCTAssertTrue(hub.hasWatchers("MAG"))
    }

    /// Who watches what, chained classes included (a replay that waits for its first reader asks for TPV and
    /// ATT), and the observer that sees each WATCH in force.
    func testWatchersOfChainedClassesAndTheWatchObserver() {
        var seen: [(ClientID, Bool)] = []
        hub.watchObserver = { client, options in seen.append((client, options.wants("TPV"))) }
        XCTAssertFalse(hub.hasWatchers("TPV"))
        hub.connect(1)
        XCTAssertFalse(hub.hasWatchers("TPV"), "connected is not watching")
        watch(1, #"{"enable":true,"json":true,"classes":["SKY"]}"#)
        XCTAssertFalse(hub.hasWatchers("TPV"))
        XCTAssertTrue(hub.hasWatchers("SKY"))
        hub.connect(2)
        watch(2, #"{"enable":true,"json":true}"#)
        XCTAssertTrue(hub.hasWatchers("TPV"))
        XCTAssertTrue(hub.hasWatchers("ATT"))
        XCTAssertFalse(hub.hasWatchers("MAG"), "MAG is opt-in")
        XCTAssertEqual(seen.map(\.0), [1, 2])
        XCTAssertEqual(seen.map(\.1), [false, true])
        hub.disconnect(2)
        XCTAssertFalse(hub.hasWatchers("TPV"))
    }

    /// gpsd 3.25 sends SKYs of DOPs only between those that list the satellites: POLL answers with the satellites,
    /// as gpsd's own POLL does, not with whichever kind came last.
    func testPollKeepsTheSatellitesAcrossASkyOfDOPsOnly() throws {
        hub.connect(1)
        var listed = SkyView(satellites: [Satellite(prn: 2, used: true), Satellite(prn: 5, used: false)])
        listed.hdop = 1.1
        var dops = SkyView(satellites: nil)
        dops.hdop = 1.3
        dops.reportedUsed = 1
        hub.publish(Report(.sky(listed)), from: .gpsd)
        hub.publish(Report(.sky(dops)), from: .gpsd)
        scheduler.advance()
        hub.handle(.poll, from: 1, now: GPSTimestamp(seconds: 5))
        let sky = try XCTUnwrap(try WireMessage(line: delivered.last!.line)["sky"]?.list?.first)
        XCTAssertEqual(sky["satellites"]?.list?.count, 2, sky.json)
        XCTAssertEqual(sky["hdop"]?.number, 1.1, "the SKY that listed them, whole")
    }

    func testPollAndPipelinesAnswers() throws {
        hub.connect(1)
        hub.publish(fix(0), from: .gpsd)
        scheduler.advance()
        hub.handle(.poll, from: 1, now: GPSTimestamp(seconds: 5))
        let poll = try WireMessage(line: delivered.last!.line)
        XCTAssertEqual(poll.className, "POLL")
        XCTAssertEqual(poll["tpv"]?.list?.first?["time"]?.string, "2023-11-14T22:13:20.000Z")
        hub.handle(.pipelines, from: 1, now: GPSTimestamp(seconds: 5))
        let p = try WireMessage(line: delivered.last!.line)
        XCTAssertEqual(p["default"]?["tpv"]?.json, #"[{"op":"min_mode","mode":3},{"op":"throttle","interval":1,"latest":true}]"#)
        XCTAssertEqual(p["named"]?.list?.first?["name"]?.string, "slow")
        XCTAssertEqual(p["named"]?.list?.first?["origin"]?.string, "config")
    }
}
