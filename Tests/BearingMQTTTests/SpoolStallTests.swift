@testable import BearingMQTT
import BearingDaemon
import BearingPublishing
import BearingModel
import BearingPOSIX
import BearingWire
import Synchronization
import TestSupport
import XCTest

/// The MQTT door's disk is its own: a spool whose disk stalls for 2 s (an SD card busy with its own
/// housekeeping) delays no reader of the pipeline, and loses nothing.
final class SpoolStallTests: XCTestCase {
    func testAStalledSpoolDiskDelaysNoReaderAndLosesNothing() throws {
        let dir = temporaryDirectory("spool-stall")
        defer { try? FileManager.default.removeItem(at: dir) }
        var config = makeAgentConfig(gpsdPort: 1, dir: dir)
        config.mqtt.spoolDirectory = dir.appendingPathComponent("spool").path
        config.mqtt.device = "stall"
        config.mqtt.topics = [.tpv: []]
        let core = PublishingCore(defaults: config.pipelines, release: Release.wireRelease)
        // No broker: the door only spools (its client is never started).
        let door = try MQTTDoor(config.mqtt, broker: MQTTBroker(host: "127.0.0.1", port: freePort(), tls: false), core: core,
                                logger: testLogger(), machineIDFile: "/nonexistent")
        let stalled = Mutex(false)
        door.outbox.slowDiskForTesting {
            if stalled.withLock({ s in defer { s = true }; return !s }) { usleep(2_000_000) }
        }
        // A reader of the same stream, as a socket client is: when each value reaches it.
        let count = 60
        let start = Syscall.monotonicSeconds()
        let arrivals = Mutex<[Double]>([])
        let reader = core.queue.sync {
            core.hub.subscribe(StreamKey(.tpv, .gpsd), through: []) { _ in arrivals.withLock { $0.append(Syscall.monotonicSeconds()) } }
        }
        // A value every 20 ms, on schedule, from the source's own thread; when each was published.
        var published: [Double] = []
        for i in 0..<count {
            let due = start + Double(i) * 0.02
            while Syscall.monotonicSeconds() < due { usleep(1_000) }
            let fix = GPSFix(mode: .threeD, time: GPSTimestamp(seconds: 1_790_000_000 + Int64(i)), latitude: 50.8, longitude: -1.3)
            published.append(Syscall.monotonicSeconds())
            core.publish(Report(.fix(fix)), from: .gpsd)
        }
        let got = arrivals.withLock { $0 }
        XCTAssertEqual(got.count, count)
        // From each value's publishing to its reaching the reader: a reader that waited for the disk is late by the
        // stall (2 s) for some value. The bound is a quarter of it, so that a busy machine's scheduling (a test's
        // thread not run for 100–200 ms) is not taken for the disk.
        let lateness = zip(got, published).map { $0 - $1 }.sorted()
        let median = lateness[lateness.count / 2], p99 = lateness[Int(Double(lateness.count - 1) * 0.99)], worst = lateness.last ?? .nan
        print(String(printf: "readers with the spool's disk stalled 2 s: lateness median %.1f ms, p99 %.1f ms, max %.1f ms",
                     median * 1000, p99 * 1000, worst * 1000))
        XCTAssertLessThan(worst, 0.5, "a reader waited for the spool's disk: lateness max \(worst) s")
        core.queue.sync { reader.cancel() }
        door.close()

        // Nothing lost: every value spooled, in order, numbered from 1 without a gap.
        let spool = try MessageSpool(directory: config.mqtt.spoolDirectory!, maxBytes: config.mqtt.spoolMaxBytes)
        let records = spool.take(10 * count)
        XCTAssertEqual(records.map(\.seq), (1...UInt64(count)).map { $0 })
        let times = records.compactMap { try? WireMessage(line: $0.payload).fix?.time?.seconds }
        XCTAssertEqual(times, (0..<count).map { 1_790_000_000 + Int64($0) })
        XCTAssertEqual(Set(records.map(\.topic)), ["bearing/stall/tpv"])
    }
}
