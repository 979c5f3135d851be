import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// A GNSS track as CSV, for `bearing attitude --gnss`: a header naming `t,lat,lon` and optionally `speed`
/// (m/s over ground), `track` (degrees true), `eps` (m/s), in any order (other columns ignored), then one line
/// per epoch; `t` on the IMU samples' clock, seconds, strictly increasing (the same epoch written again, time and
/// position, is taken once); blank and `#` lines skipped. Where
/// speed and track are not given they come from the positions of the epochs either side (`parse`; two either side
/// where the positions jitter by metres from one epoch to the next, `chordReach`). Errors name
/// the line and the column (`IMUSampleFileError`).
public struct GNSSTrackFile: Sendable {
    public struct Epoch: Equatable, Sendable {
        public var time: Double
        public var latitude: Double
        public var longitude: Double
        public var speed: Double?
        public var track: Double?
        public var eps: Double?

        public init(time: Double, latitude: Double, longitude: Double, speed: Double? = nil, track: Double? = nil, eps: Double? = nil) {
            self.time = time
            self.latitude = latitude
            self.longitude = longitude
            self.speed = speed
            self.track = track
            self.eps = eps
        }
    }

    public var epochs: [Epoch]
    /// How far the positions jitter from one epoch to the next (m an axis, `positionNoise(_:)`) when the file gave no
    /// `track` column, so that every course came from the positions (`parse`): it sets how wide their chords are
    /// (`chordReach`) and how noisy the courses are (`TrackClock.attainable`). nil when the file gave the courses, or
    /// had too few evenly spaced epochs to tell.
    public var positionNoise: Double?

    /// Epochs further apart than this many times the file's median interval have a gap between them.
    public static let gapIntervals = 2.5

    public init(epochs: [Epoch], positionNoise: Double? = nil) {
        self.epochs = epochs
        self.positionNoise = positionNoise
    }

    /// The same track with `offset` seconds added to every epoch's time (another clock's times on the samples').
    public func shifted(by offset: Double) -> GNSSTrackFile {
        GNSSTrackFile(epochs: epochs.map { e in
            var e = e
            e.time += offset
            return e
        }, positionNoise: positionNoise)
    }

    /// The first and last epochs' times (nil: no epoch).
    public var span: ClosedRange<Double>? { epochs.first.flatMap { a in epochs.last.map { a.time...$0.time } } }

    public static func parse(_ text: String, source: String) throws(IMUSampleFileError) -> GNSSTrackFile {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter { _, l in
            let t = l.trimmingWhitespace()
            return !t.isEmpty && !t.hasPrefix("#")
        }
        guard !lines.isEmpty else { throw IMUSampleFileError(source: source, "empty: expected a header naming t,lat,lon") }
        let header = lines.removeFirst().element.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let ti = column("t"), let lati = column("lat"), let loni = column("lon") else {
            throw IMUSampleFileError(source: source, line: 1, "the header must name t, lat and lon (and may name speed, track, eps): \(header.joined(separator: ","))")
        }
        let optional = [("speed", column("speed")), ("track", column("track")), ("eps", column("eps"))]
        var epochs: [Epoch] = []
        for (index, line) in lines {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
            func value(_ i: Int, _ name: String) throws(IMUSampleFileError) -> Double {
                guard i < fields.count else { throw IMUSampleFileError(source: source, line: index + 1, column: name, "missing") }
                guard let v = Double(fields[i]), v.isFinite else {
                    throw IMUSampleFileError(source: source, line: index + 1, column: name, "\"\(fields[i])\" is not a finite number")
                }
                return v
            }
            var e = Epoch(time: try value(ti, "t"), latitude: try value(lati, "lat"), longitude: try value(loni, "lon"))
            guard abs(e.latitude) <= 90, abs(e.longitude) <= 180 else {
                throw IMUSampleFileError(source: source, line: index + 1, column: abs(e.latitude) > 90 ? "lat" : "lon", "not a position in degrees")
            }
            if let last = epochs.last, e.time <= last.time {
                // The same epoch again (gpsd sends several TPVs an epoch, each with its time and position): taken once.
                if e.time == last.time && e.latitude == last.latitude && e.longitude == last.longitude { continue }
                let another = e.time == last.time ? ", and its position is another" : ""
                throw IMUSampleFileError(source: source, line: index + 1, column: "t", "\(e.time) is not after the epoch before (\(last.time))\(another)")
            }
            for (name, i) in optional {
                guard let i, i < fields.count, !fields[i].isEmpty else { continue }
                let v = try value(i, name)
                switch name {
                case "speed": e.speed = v
                case "track": e.track = v
                default: e.eps = v
                }
            }
            epochs.append(e)
        }
        // Speed and course from the positions where the file gives none: a central difference (the epochs either
        // side; two either side where the positions jitter by metres, `chordReach`), the velocity *at* the epoch as a
        // receiver's Doppler gives it (a backward one is half an epoch late: 1° of course at 2 °/s of turn and 1 Hz);
        // forward and backward at the ends, and beside a gap (more than `gapIntervals` of the file's median interval:
        // a tunnel, a receiver that lost lock), whose chord is no velocity. An epoch alone between two gaps has none.
        let typical = typicalInterval(epochs)
        let longest = typical.map { gapIntervals * $0 } ?? 0
        let noise = Self.positionNoise(epochs)
        let reach = chordReach(noise, interval: typical)
        let derived = epochs.indices.map { i -> (speed: Double, track: Double)? in
            var before = i, after = i
            while before > 0, i - before < reach, epochs[before].time - epochs[before - 1].time <= longest { before -= 1 }
            while after + 1 < epochs.count, after - i < reach, epochs[after + 1].time - epochs[after].time <= longest { after += 1 }
            guard before != after else { return nil }
            let a = epochs[before], b = epochs[after]
            let r = 6_371_000.0, lat = (a.latitude + b.latitude) / 2 * .pi / 180
            let north = (b.latitude - a.latitude) * .pi / 180 * r
            let east = (b.longitude - a.longitude) * .pi / 180 * r * cos(lat)
            return ((north * north + east * east).squareRoot() / (b.time - a.time), AttitudeAngles.normalizedDegrees(atan2(east, north) * 180 / .pi))
        }
        try checkUnits(epochs, derived: derived, source: source)
        for i in epochs.indices {
            guard let d = derived[i] else { continue }
            if epochs[i].speed == nil { epochs[i].speed = d.speed }
            if epochs[i].track == nil { epochs[i].track = d.track }
        }
        return GNSSTrackFile(epochs: epochs, positionNoise: column("track") == nil ? noise : nil)
    }

    /// The track's typical interval between epochs, s: the upper median of the intervals (nil with one epoch or none).
    /// Epochs further apart than `gapIntervals` of it have a gap between them.
    public static func typicalInterval(_ epochs: [Epoch]) -> Double? {
        let intervals = zip(epochs.dropFirst(), epochs).map { $0.time - $1.time }
        return intervals.isEmpty ? nil : median(intervals)
    }

    /// The positions' own noise from one epoch to the next (m an axis, white), from the median length of the second
    /// difference of the positions over evenly spaced triples: three positions of a vehicle at constant velocity have
    /// none; white noise of σ an axis gives a second difference of σ√6 an axis, whose length (Rayleigh) has the median
    /// σ√6 × 1.1774. A vehicle's own changes of velocity add to it, an interval's squared worth: at 1 Hz a second's at
    /// most (a corner's 3 m/s² is 3 m, but corners are a few epochs in a hundred); at 5 s, 25 times that, more than the
    /// noise (`chordReach` then keeps one epoch either side). nil with fewer than 20 such triples.
    public static func positionNoise(_ epochs: [Epoch]) -> Double? {
        var lengths: [Double] = []
        for i in epochs.indices.dropFirst().dropLast() {
            let a = epochs[i - 1], b = epochs[i], c = epochs[i + 1]
            let d1 = b.time - a.time, d2 = c.time - b.time
            guard d1 > 0, abs(d2 - d1) <= 0.1 * d1 else { continue }
            let r = 6_371_000.0, k = cos(b.latitude * .pi / 180)
            let north = (c.latitude - 2 * b.latitude + a.latitude) * .pi / 180 * r
            let east = (c.longitude - 2 * b.longitude + a.longitude) * .pi / 180 * r * k
            lengths.append((north * north + east * east).squareRoot())
        }
        guard lengths.count >= 20 else { return nil }
        return median(lengths) / (6.0.squareRoot() * 1.1774)
    }

    /// How many epochs either side a course derived from the positions spans: one (the tangent at the epoch, the
    /// velocity a receiver's Doppler gives) unless the positions jitter by `jitterForWiderChord` (m an axis) or more
    /// from one epoch to the next, then two. A chord k epochs either side of an epoch on an arc at constant speed still
    /// points along the tangent at it, and its noise is 1/k of the shortest's; but the first k epochs out of a turn
    /// carry k epochs of it. On the simulated drives (`RoadDriveTests.testWithGNSSPositionsThatJitter`) two epochs
    /// either side took 2 m of jitter from 1.49° to 0.97° (worst window 5.22° → 3.90°) and left 1 m as it was (0.73°,
    /// 0.75°); three took 2 m to 1.36° (worst window 6.71°); clean tracks (0.22 m estimated) keep one.
    /// Two only while they span at most `widestHalfChord` seconds either side (`interval`: the track's typical one):
    /// a track logged every few seconds already spans seconds, and its second differences hold the vehicle's own changes
    /// of velocity (25 times a second's at 5 s), which the noise's estimate then takes for jitter
    /// (`RoadDriveTests.testWithATrackLoggedEveryFewSeconds`: every 5 s, a chord of 20 s, 2.66° against 0.89° with one).
    /// And at least `narrowestHalfChord` either side: a track at 10 Hz spans a second each way, not a tenth, whose 1.4 m
    /// at 14 m/s the positions' errors from one epoch to the next turn by degrees
    /// (`RoadDriveTests.testAReceiverGivingFiveOrTenFixesASecond`: 1.18° → 0.65°, worst window 3.35° → 1.42°; 0.58° and
    /// 1.69° with the fusion's one epoch a second to learn from, `AttitudeFusion.learningEpochInterval`).
    ///
    /// Noisier positions want wider chords still (a course's noise is 1/k of the shortest's, what a turn smears into it
    /// k times): from `widerChords`' jitter on, a chord spans its seconds either side. On the simulated drives, positions
    /// only (`RoadDriveTests.testWithGNSSPositionsThatJitter`, 2026-12-04): 5 m of jitter 2.13° →
    /// 1.76° with 3 s (2.04° with 4 s), 10 m 3.64° → 2.40° with 4 s (2.38° with 5 s, 2.84° with 6 s), worse than no GNSS
    /// at all (2.62°) before; a phone's positions in town jitter by metres.
    static func chordReach(_ noise: Double?, interval: Double?) -> Int {
        let step = interval ?? 1
        let shortest = max(1, Int((narrowestHalfChord / step).rounded()))
        guard let noise, noise >= jitterForWiderChord, 2 * step <= widestHalfChord else { return shortest }
        let wider = widerChords.last { noise >= $0.jitter }.map { Int(($0.seconds / step).rounded()) } ?? 0
        return max(2, shortest, wider)
    }

    /// From this jitter of the positions (m an axis) on, a chord spans this many seconds either side of its epoch.
    static let widerChords: [(jitter: Double, seconds: Double)] = [(4, 3), (8, 4)]

    /// The shortest a chord may span either side of its epoch, s: a second, as one epoch either side at 1 Hz.
    public static let narrowestHalfChord = 1.0

    /// The longest a chord may span either side of its epoch, s, for it to take two epochs either side.
    public static let widestHalfChord = 2.5

    public static let jitterForWiderChord = 1.5

    /// The upper median (the middle value, or the higher of the two middle ones) of values that are not empty.
    private static func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }

    /// The given speeds and tracks against the positions', judged on the whole file where the vehicle moves
    /// at 3 m/s or more (single epochs are never judged: a GNSS glitch): speeds in km/h or knots, and tracks
    /// in radians, are named.
    private static func checkUnits(_ epochs: [Epoch], derived: [(speed: Double, track: Double)?], source: String) throws(IMUSampleFileError) {
        var ratios: [Double] = [], degreesOff: [Double] = [], radiansOff: [Double] = []
        for (e, d) in zip(epochs, derived) {
            guard let d, d.speed >= 3 else { continue }
            if let v = e.speed { ratios.append(v / d.speed) }
            if let t = e.track {
                degreesOff.append(abs(SwingSolver.wrap180(t - d.track)))
                radiansOff.append(abs(SwingSolver.wrap180(t * 180 / .pi - d.track)))
            }
        }
        if ratios.count >= 10 {
            let r = median(ratios), shown = String(printf: "%.2f", r)
            if r > 3.2 && r < 4.0 {
                throw IMUSampleFileError(source: source, column: "speed", "the speeds are \(shown) times the positions': they look like km/h; give m/s (divide by 3.6)")
            }
            if r > 1.75 && r < 2.15 {
                throw IMUSampleFileError(source: source, column: "speed", "the speeds are \(shown) times the positions': they look like knots; give m/s (multiply by 0.514444)")
            }
        }
        if degreesOff.count >= 10, median(degreesOff) > 30, median(radiansOff) < 10 {
            throw IMUSampleFileError(source: source, column: "track",
                "the tracks look like radians (as degrees they are \(String(printf: "%.0f", median(degreesOff)))° off the positions' course, as radians \(String(printf: "%.1f", median(radiansOff)))°); give degrees true")
        }
    }
}
