import ArgumentParser
import BearingDaemon
import BearingPOSIX
import BearingLog
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bearing record --duration D FILE`: what the sensors and gpsd say, recorded as the daemon's black box
/// records it, without the service (bench work).
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record the sensors and gpsd to a black-box file for a while, without the service.",
        discussion: """
            Runs the daemon's sources and pipeline in this process (its socket in a private directory, no \
            doors) and writes everything that entered the pipeline to FILE when the time is up or on SIGINT. \
            `bearing replay FILE` replays it. Stop the service first if it reads the same I2C bus.
            """)

    @OptionGroup var boardOptions: BoardOptions
    @Option(help: ArgumentHelp("How long: seconds, or with s, m or h (e.g. 90, 10m, 2h).", valueName: "duration")) var duration: String
    @Argument(help: "Where to write the recording.") var file: String

    static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        if let u = text.last, let scale = units[u] { return Double(text.dropLast()).map { $0 * scale } }
        return Double(text)
    }

    func run() async throws {
        guard let seconds = Self.seconds(duration), seconds > 0, seconds <= 7 * 86_400 else {
            throw ValidationError("--duration \(duration): seconds, or a number with s, m or h, up to a week")
        }
        var c = try boardOptions.resolve()
        let scratch: String
        do { scratch = try Directory.makeTemporary(prefix: "/tmp/bearing-record-") } catch {
            throw ExitStatus.failure("cannot make a directory for the recording's socket: \(error)")
        }
        defer { Directory.removeFlat(scratch) }
        c.keepToThisProcess(in: scratch)
        c.blackbox.enabled = true
        c.blackbox.continuous = false
        c.blackbox.minutes = seconds / 60 + 1
        c.blackbox.maxBytes = Int.max / 4
        let logger = Logger(label: "bearing", level: c.log.level)
        let daemon: Daemon
        do {
            daemon = try Daemon(config: c, logger: logger, origin: boardOptions.origin())
        } catch {
            throw ExitStatus.failure("cannot start: \(error)")
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { daemon.shutdown() }
        try await daemon.run()
        guard let recorder = daemon.agent.recorder else { return }
        do {
            try recorder.save(to: file, reason: "record")
        } catch {
            throw ExitStatus.failure("cannot write \(file): \(error)")
        }
        print("recorded \(Int(seconds)) s to \(file) (\(recorder.ringSize.bytes) bytes in \(recorder.ringSize.frames) frames)")
    }
}
