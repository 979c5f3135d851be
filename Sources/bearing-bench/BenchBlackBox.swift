import ArgumentParser
import BearingDaemon
import BearingModel
import BearingPOSIX
import BearingRecording
import BearingLog
import CBearingSys
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The black box's ring at its defaults, for `bench/blackbox`: a recording's events appended over and
/// over (times shifted) to a `BlackBoxRecorder` with the default config until `--minutes` of recorded
/// time have passed, as the daemon appends them; prints the ring's bytes and frames, the heap in use
/// (glibc's `mallinfo2`: allocated bytes, mmapped blocks included) and VmRSS before and after, as JSON.
/// The heap figure is the ring's memory; RSS moves with what the allocator keeps or returns besides.
struct BenchBlackBox: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-blackbox")

    @Argument var file: String
    @Option var minutes: Double = 30

    func run() throws {
        let recording = try Recording(bytes: AtomicFile.read(file, limit: 1 << 30))
        let stream = recording.events.filter { $0.record.key == nil }
        let keys = recording.events.filter { $0.record.key != nil }
        guard let first = stream.first?.time, let last = stream.last?.time, last > first else {
            throw BenchFailure.failure("\(file): no stream records to loop")
        }
        let span = last - first + 10_000
        // Once through a small recorder first: the code and the allocator's arenas are then warm, and
        // before/after differ by the ring's own memory.
        let warm = BlackBoxRecorder(config: { var c = BlackBoxConfig(); c.maxBytes = 64 * 1024; return c }(),
                                    logger: Logger(label: "bench", level: .error))
        for e in recording.events { warm.append(e) }
        _ = warm.ringFile()
        let before = Self.rss(), heapBefore = Self.heapInUse()
        let recorder = BlackBoxRecorder(config: BlackBoxConfig(), logger: Logger(label: "bench", level: .error))
        for e in keys { recorder.append(e) }
        var shift: UInt64 = 0
        var appended = 0
        let goal = UInt64(minutes * 60e6)
        let start = Syscall.monotonicSeconds()
        while shift < goal {
            for e in stream {
                recorder.append(RecordedEvent(time: e.time &+ shift, e.record))
                appended += 1
            }
            shift += span
        }
        let took = Syscall.monotonicSeconds() - start
        let after = Self.rss(), heapAfter = Self.heapInUse()
        let ring = recorder.ringSize
        print(#"{"events":\#(appended),"recorded_minutes":\#(Double(shift) / 60e6),"ring_bytes":\#(ring.bytes),"ring_frames":\#(ring.frames),"#
              + #""heap_in_use_added_kb":\#((heapAfter - heapBefore) / 1024),"rss_before_kb":\#(before),"rss_after_kb":\#(after),"#
              + #""append_seconds":\#(took)}"#)
        // What was there before stays until after: only the ring's memory is counted.
        withExtendedLifetime((recorder, recording, stream, keys)) {}
    }

    /// Bytes the allocator has handed out and not had back, mmapped blocks included.
    static func heapInUse() -> Int {
        Int(bearing_heap_in_use())
    }

    /// VmRSS in kB, from /proc/self/status.
    static func rss() -> Int {
        guard let text = try? AtomicFile.readText("/proc/self/status") else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        }
        return -1
    }
}
