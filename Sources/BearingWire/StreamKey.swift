/// Where a stream comes from: gpsd, or Bearing's own compass (ATT only).
public enum StreamSource: String, Hashable, Sendable, CaseIterable {
    case gpsd, compass
}

/// One published stream: a class from a source. ATT exists twice (gpsd's and the compass's), each
/// with its own default chain and its own instance of any client chain for ATT.
public struct StreamKey: Hashable, Sendable, CustomStringConvertible {
    public var stream: StreamClass
    public var source: StreamSource
    public init(_ stream: StreamClass, _ source: StreamSource) {
        self.stream = stream
        self.source = source
    }

    public static let all: [StreamKey] = [
        .init(.tpv, .gpsd), .init(.sky, .gpsd), .init(.att, .compass), .init(.att, .gpsd),
        .init(.gst, .gpsd), .init(.pps, .gpsd), .init(.toff, .gpsd),
    ]

    /// The key under `pipeline:` in the config (`tpv`, `att` for the compass, `gpsd_att`, …).
    public var configName: String {
        stream == .att && source == .gpsd ? "gpsd_att" : stream.rawValue.lowercased()
    }

    public var description: String { "\(stream.rawValue) from \(source.rawValue)" }
}
