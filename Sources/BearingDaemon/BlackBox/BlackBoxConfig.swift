import BearingConfig
import BearingMQTT
import BearingYAML
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The black box: what it keeps in memory, where saves and continuous recordings go (docs/blackbox.md).
public struct BlackBoxConfig: Equatable, Sendable {
    /// Record at all (the in-memory ring).
    public var enabled = true
    /// Minutes the ring keeps.
    public var minutes: Double = 15
    /// Bytes the ring may hold, whatever `minutes` says.
    public var maxBytes = 1_536 * 1024
    /// Where saves (`bearing blackbox save` without a file, SIGUSR1, faults) and continuous segments go.
    public var directory: String = BlackBoxConfig.defaultDirectory()
    /// Save the ring when the daemon sees a fault: a sensor or gpsd lost, the watchdog about to fire.
    public var saveOnFault = true
    /// Saved rings kept in `directory` (the oldest go first).
    public var keepSaves = 10
    /// Also record to disk, in rotated segments.
    public var continuous = false
    /// Minutes per continuous segment.
    public var segmentMinutes: Double = 10
    /// Bytes all continuous segments may take together; the oldest goes first.
    public var diskBytes = 256 * 1024 * 1024

    public init() {}

    public static func defaultDirectory() -> String {
        let state = getenv("STATE_DIRECTORY").map { String(cString: $0) }?.split(separator: ":").first.map(String.init)
        return (state ?? "/var/lib/bearing") + "/blackbox"
    }

    static let keys: [ConfigKey<Self>] = [
        .bool("enabled", \.enabled, "keep the black box: the last `minutes` of what the sensors and gpsd said, in memory"),
        .number("minutes", \.minutes, 1...240, " min", "minutes", "how much the ring keeps (bounded by `max_bytes` too)"),
        .init("max_bytes", "a size from 64K to 64M, in bytes or with K or M", "the most the ring holds in memory",
              default: { ConfigShow.code(ConfigReader.sizeText($0.maxBytes)) }) { r, node, path, c in
            c.maxBytes = try r.byteSize(node, path, 64 * 1024...64 * 1024 * 1024)
        },
        .path("directory", \.directory, default: "`$STATE_DIRECTORY/blackbox`, else `/var/lib/bearing/blackbox`",
              "where saved rings and continuous segments are written"),
        .bool("save_on_fault", \.saveOnFault, "save the ring when a sensor or gpsd is lost or the watchdog is about to fire"),
        .int("keep_saves", \.keepSaves, 1...1000, "saved rings kept in `directory`; the oldest is removed first"),
        .bool("continuous", \.continuous, "also record to disk in rotated segments (SD cards wear: off by default)"),
        .number("segment_minutes", \.segmentMinutes, 1...1440, " min", "minutes", "length of one continuous segment"),
        .init("disk_bytes", "a size from 1M to 64G, in bytes or with K, M or G", "the most all continuous segments take; the oldest goes first (logged once)",
              default: { ConfigShow.code(ConfigReader.sizeText($0.diskBytes)) }) { r, node, path, c in
            c.diskBytes = try r.byteSize(node, path, 1024 * 1024...64 * 1024 * 1024 * 1024)
        },
    ]
}
