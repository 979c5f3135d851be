import ArgumentParser
import BearingDaemon
import BearingPublishing
import BearingSocketDoor
import BearingModel
import BearingWire
import BearingPOSIX
import BearingLog
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The publishing core's cost per delivered message, for `bench/fanout`: a `SocketDoor` on a `PublishingCore`, on a real
/// UNIX socket, `--clients` readers in another process (bench/fanout-readers.py) each with a chain of its
/// own (`--mode own`) or on one of three named pipelines (`--mode named`), fed TPV at 10 Hz and ATT at
/// 50 Hz for `--seconds`. Prints this process's CPU time, RSS and the hub's chain runs as JSON.
struct BenchFanout: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-fanout")

    @Option var socket: String
    @Option var clients: Int = 100
    @Option var seconds: Double = 20
    @Option var mode: String = "own"
    /// TPV and ATT per second.
    @Option var tpvRate: Double = 10
    @Option var attRate: Double = 50
    /// `socket.write_interval` for the run.
    @Option var writeInterval: Double = 0

    func run() throws {
        var s = AgentConfig.Socket()
        s.path = socket
        s.maxClients = clients + 10
        s.clientQueue = 1024
        s.writeInterval = writeInterval
        var defaults: [StreamKey: [OperatorSpec]] = [:]
        for key in StreamKey.all { defaults[key] = [] }
        let named = (0..<3).map { i in
            NamedPipeline(name: "n\(i)", chains: [.tpv: [.dedupe(.time)], .att: [.dedupe(.time)]], origin: .config)
        }
        let logger = Logger(label: "bench", level: .error)
        let core = PublishingCore(defaults: defaults, named: named, release: Release.wireRelease)
        let server = try SocketDoor.open(SocketDoor.Configuration(socket: s), core: core, logger: logger)
        defer { server.stop() }
        print("{\"ready\":true}")
        fflush(Syscall.standardOutput)
        // Wait until every reader is watching.
        let deadline = Syscall.monotonicSeconds() + 60
        while server.queue.sync(execute: { server.hub.clientCount }) < clients && Syscall.monotonicSeconds() < deadline { usleep(20_000) }
        usleep(500_000)
        let runs = server.queue.sync { server.hub.runCount }
        let writesBefore = server.transportStatistics?.writes ?? 0
        var before = rusage()
        getrusage(RUSAGE_SELF.rawValue, &before)
        let start = Syscall.monotonicSeconds()
        var tpv = 0, att = 0
        let step = 1 / attRate
        var next = start
        let perTPV = max(1, Int((attRate / tpvRate).rounded()))
        var i = 0
        while Syscall.monotonicSeconds() - start < seconds {
            let t = GPSTimestamp(unixTime: 1_780_000_000 + Double(i) * step)
            server.publish(Report(.attitude(Attitude(time: t, device: "i2c:bench", heading: Double(i % 360), magneticHeading: Double(i % 360),
                                                     field: Vector3(20, 1, 40), dip: 63, magStatus: "N", declination: 0.5,
                                                     declinationSource: .fix))), from: .compass)
            att += 1
            if i % perTPV == 0 {
                var f = GPSFix(mode: .threeD, time: t, latitude: 50.8 + Double(i) * 1e-7, longitude: -1.1)
                f.speed = 3; f.track = 47; f.eph = 5; f.altHAE = 60
                server.publish(Report(.fix(f)), from: .gpsd)
                tpv += 1
            }
            i += 1
            next += step
            let wait = next - Syscall.monotonicSeconds()
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
        }
        server.queue.sync {}
        usleep(500_000)
        var after = rusage()
        getrusage(RUSAGE_SELF.rawValue, &after)
        let writes = (server.transportStatistics?.writes ?? 0) - writesBefore
        func secs(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        let cpu = secs(after.ru_utime) - secs(before.ru_utime) + secs(after.ru_stime) - secs(before.ru_stime)
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.map { String($0.dropFirst(6)).trimmingWhitespace() } ?? "?"
        print("{\"mode\":\"\(mode)\",\"clients\":\(clients),\"tpv\":\(tpv),\"att\":\(att),\"cpu_seconds\":\(cpu),\"writes\":\(writes),\"write_interval\":\(writeInterval),\"rss\":\"\(rss)\",\"runs\":{\"standard\":\(runs.standard),\"named\":\(runs.named),\"client\":\(runs.client)}}")
        fflush(Syscall.standardOutput)
    }
}
