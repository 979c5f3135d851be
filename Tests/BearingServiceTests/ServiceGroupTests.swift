import BearingService
import BearingLog
import Synchronization
import TestSupport
import XCTest

/// The order and failure rules of `ServiceGroup`: last service first, each after the one before has returned.
final class ServiceGroupTests: XCTestCase {
    /// What the services did, in order.
    final class Journal: Sendable {
        let entries = Mutex<[String]>([])
        func note(_ s: String) { entries.withLock { $0.append(s) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// Waits for shutdown, then takes a while (yielding) to stop, so a service stopped too early would show.
    struct Part: Service {
        let name: String
        let journal: Journal
        func run(until shutdown: ShutdownEvent) async throws {
            journal.note("\(name) running")
            await shutdown.wait()
            journal.note("\(name) stopping")
            for _ in 0..<20 { await Task.yield() }
            journal.note("\(name) stopped")
        }
    }

    struct Failing: Service {
        struct Broken: Error {}
        func run(until shutdown: ShutdownEvent) async throws { throw Broken() }
    }

    func testShutdownStopsServicesLastFirstEachAfterThePreviousReturned() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: ["a", "b", "c"].map { (name: $0, service: Part(name: $0, journal: journal)) },
                                 signals: [], logger: testLogger())
        async let run: Void = group.run()
        while journal.all.filter({ $0.hasSuffix("running") }).count < 3 { await Task.yield() }
        group.shutdown()
        try await run
        XCTAssertEqual(journal.all.filter { !$0.hasSuffix("running") },
                       ["c stopping", "c stopped", "b stopping", "b stopped", "a stopping", "a stopped"])
    }

    func testAFailingServiceShutsTheOthersDownAndItsErrorIsRethrown() async throws {
        let journal = Journal()
        let group = ServiceGroup(services: [(name: "a", service: Part(name: "a", journal: journal)),
                                           (name: "broken", service: Failing())],
                                 signals: [], logger: testLogger())
        do {
            try await group.run()
            XCTFail("the group returned normally although a service threw")
        } catch is Failing.Broken {}
        XCTAssertEqual(journal.all.last, "a stopped")
    }

    func testRunUntilCancelsTheBodyWhenTheEventFires() async throws {
        let event = ShutdownEvent()
        let journal = Journal()
        async let run: Void = event.runUntil {
            journal.note("started")
            do { try await Task.sleep(for: .seconds(3600)) } catch { journal.note("cancelled") }
        }
        while journal.all.isEmpty { await Task.yield() }
        await event.fire()
        try await run
        XCTAssertEqual(journal.all, ["started", "cancelled"])
    }
}

final class LoggerTests: XCTestCase {
    final class Capture: LogHandler {
        let lines = Mutex<[String]>([])
        func log(level: Logger.Level, message: String, metadata: Logger.Metadata) {
            lines.withLock { $0.append(JournaldLogHandler(journald: true).line(level: level, message: message, metadata: metadata)) }
        }
    }

    func testLevelsBelowTheLoggersAreNotBuiltNorWritten() {
        let capture = Capture()
        let logger = Logger(label: "t", level: .notice, handler: capture)
        var built = 0
        func message(_ s: String) -> String { built += 1; return s }
        logger.debug(message("hidden"))
        logger.info(message("hidden"))
        logger.notice(message("shown"), metadata: ["b": "2", "a": "1"])
        logger.critical(message("line one\nline two"))
        XCTAssertEqual(built, 2)
        XCTAssertEqual(capture.lines.withLock { $0 }, ["<5>shown a=1 b=2\n", "<2>line one ⏎ line two\n"])
    }

    func testLevelNamesAndOrderAreSyslogs() {
        XCTAssertEqual(Logger.Level.allCases.map(\.rawValue), ["trace", "debug", "info", "notice", "warning", "error", "critical"])
        XCTAssertEqual(Logger.Level.allCases.map(JournaldLogHandler.priority), [7, 7, 6, 5, 4, 3, 2])
        XCTAssertTrue(Logger.Level.warning > .info)
    }
}
