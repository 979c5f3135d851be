import BearingWire
import BearingModel
/// What is wrong with an IMU sample file, and where: `file line 12, column gyr_y: "x" is not a number`.
public struct IMUSampleFileError: Error, Equatable, CustomStringConvertible {
    public var source: String
    /// 1-based line of the file, when the problem is on one line.
    public var line: Int?
    /// The column's header name, when the problem is in one column.
    public var column: String?
    public var problem: String

    public init(source: String, line: Int? = nil, column: String? = nil, _ problem: String) {
        self.source = source
        self.line = line
        self.column = column
        self.problem = problem
    }

    public var description: String {
        var place = source
        if let line { place += " line \(line)" }
        if let column { place += (line == nil ? " " : ", ") + "column \(column)" }
        return "\(place): \(problem)"
    }
}

/// An IMU recording as CSV text: a header naming the columns `t,acc_x,acc_y,acc_z,gyr_x,gyr_y,gyr_z` and
/// optionally `mag_x,mag_y,mag_z` (in any order, other columns ignored), then one line per sample (a row with
/// all three mag cells empty has no field sample: a magnetometer slower than the IMU); blank
/// lines and `#` comment lines are skipped, except that the keys of a `# bearing-samples chip=… device=…`
/// line (Bearing's recordings) are kept in `metadata`. A line that repeats the sample line before it to the byte (a
/// logger that wrote it twice) is taken once and named in `repeatedLines`; a time that does not advance with other
/// values is refused. Units: t in seconds, strictly increasing; acc in m/s²; gyr in
/// rad/s; mag in µT (any unit works for the filter; online calibration needs µT: `magnetometerUnitProblem`). The units are checked on the whole file: the median
/// |acc| must be about 9.8 (a file in g or mg is named as such), and a gyroscope whose quietest tenth of
/// samples turns faster than 20 °/s, or whose 99th percentile exceeds 40 rad/s (beyond a 2000 °/s chip),
/// is taken for °/s. Single rows are never judged: a fast translation reaches 10 g.
public struct IMUSampleFile: Sendable {
    public var samples: [IMUSample]
    /// Whether the file has magnetometer columns (9D); without them the heading is free (6D).
    public var hasMagnetometer: Bool
    /// Whether the file has gyroscope columns; only a file parsed with `requireGyroscope: false` may lack
    /// them, and then every sample's `gyroscope` is zero.
    public var hasGyroscope = true
    /// The keys of a `# bearing-samples` line (`chip`, `device`).
    public var metadata: [String: String] = [:]
    /// The lines (1-based) that repeated the sample line before them to the byte, each taken once.
    public var repeatedLines: [Int] = []

    /// What to tell of `repeatedLines` (nil: none), `source` naming the file.
    public func repeatedLinesNote(source: String) -> String? {
        guard let first = repeatedLines.first else { return nil }
        let more = repeatedLines.count > 1 ? " (and \(repeatedLines.count - 1) more)" : ""
        return "\(source): line \(first)\(more) repeats the line before it exactly: taken once"
    }

    public static let timeColumn = "t"
    public static let accelerometerColumns = ["acc_x", "acc_y", "acc_z"]
    public static let gyroscopeColumns = ["gyr_x", "gyr_y", "gyr_z"]
    public static let magnetometerColumns = ["mag_x", "mag_y", "mag_z"]
    /// The header of a 9D file in the standard order.
    public static let header = ([timeColumn] + accelerometerColumns + gyroscopeColumns + magnetometerColumns).joined(separator: ",")

    public init(samples: [IMUSample], hasMagnetometer: Bool) {
        self.samples = samples
        self.hasMagnetometer = hasMagnetometer
    }

    /// Parses and checks `text`; `source` names the file in errors. With `requireGyroscope` false the gyr
    /// columns may be left out (an accelerometer without a gyroscope).
    public static func parse(_ text: String, source: String, requireGyroscope: Bool = true) throws(IMUSampleFileError) -> IMUSampleFile {
        var text = text
        let result = text.withUTF8 { parse(bytes: $0, source: source, requireGyroscope: requireGyroscope) }
        let file = try result.get()
        try checkUnits(file, source: source)
        return file
    }

    // MARK: Parsing

    private struct Layout {
        var names: [String]
        /// Column indexes of t, acc x/y/z, then gyr x/y/z and mag x/y/z when present.
        var wanted: [Int]
        var hasGyroscope: Bool
        var hasMagnetometer: Bool
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>, source: String, requireGyroscope: Bool) -> Result<IMUSampleFile, IMUSampleFileError> {
        var layout: Layout?
        var metadata: [String: String] = [:]
        var samples: [IMUSample] = []
        samples.reserveCapacity(bytes.count / 80)
        var values = [Double](repeating: 0, count: 10)
        var fieldStarts: [Int] = []
        var fieldEnds: [Int] = []
        var lineNumber = 0
        var previousTime = -Double.infinity
        var previousLine = 0
        var previousBytes = 0..<0
        var repeatedLines: [Int] = []
        var start = 0
        let newline = UInt8(ascii: "\n")

        while start < bytes.count {
            lineNumber += 1
            var end = start
            while end < bytes.count && bytes[end] != newline { end += 1 }
            let next = end + 1
            let bounds = trimmed(bytes, start, end)
            var a = bounds.0
            let b = bounds.1
            defer { start = next }
            if a == b { continue }
            if bytes[a] == UInt8(ascii: "#") {
                let line = String(decoding: UnsafeBufferPointer(rebasing: bytes[a..<b]), as: UTF8.self)
                if line.hasPrefix(SampleFile.recordingMarker) {
                    for pair in line.dropFirst(SampleFile.recordingMarker.count).split(separator: " ") {
                        let kv = pair.split(separator: "=", maxSplits: 1)
                        if kv.count == 2 { metadata[String(kv[0])] = String(kv[1]) }
                    }
                }
                continue
            }
            if lineNumber == 1, b - a >= 3, bytes[a] == 0xEF, bytes[a + 1] == 0xBB, bytes[a + 2] == 0xBF { a += 3 }  // UTF-8 BOM

            fieldStarts.removeAll(keepingCapacity: true)
            fieldEnds.removeAll(keepingCapacity: true)
            var f = a
            for i in a...b where i == b || bytes[i] == UInt8(ascii: ",") {
                let (s, e) = trimmed(bytes, f, i)
                fieldStarts.append(s)
                fieldEnds.append(e)
                f = i + 1
            }

            guard let layout else {
                let names = zip(fieldStarts, fieldEnds).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0..<$1]), as: UTF8.self).lowercased() }
                switch makeLayout(names, source: source, line: lineNumber, requireGyroscope: requireGyroscope) {
                case .success(let l): layout = l
                case .failure(let e): return .failure(e)
                }
                continue
            }

            guard fieldStarts.count == layout.names.count else {
                return .failure(IMUSampleFileError(source: source, line: lineNumber,
                    "\(fieldStarts.count) columns, the header names \(layout.names.count) (\(layout.names.joined(separator: ",")))"))
            }
            let m = layout.hasGyroscope ? 7 : 4
            // A magnetometer slower than the IMU: a row with all three mag cells empty has no field sample.
            let noField = layout.hasMagnetometer && layout.wanted[m...].allSatisfy { fieldStarts[$0] == fieldEnds[$0] }
            for (k, column) in layout.wanted.enumerated() where !(noField && k >= m) {
                let field = UnsafeBufferPointer(rebasing: bytes[fieldStarts[column]..<fieldEnds[column]])
                guard let v = number(field), v.isFinite else {
                    let text = String(decoding: field, as: UTF8.self)
                    let what = text.isEmpty ? "is empty" : "\"\(text.prefix(24))\" is not a finite number"
                    return .failure(IMUSampleFileError(source: source, line: lineNumber, column: layout.names[column], what))
                }
                values[k] = v
            }
            let time = values[0]
            if time == previousTime, b - a == previousBytes.count,
               UnsafeBufferPointer(rebasing: bytes[a..<b]).elementsEqual(UnsafeBufferPointer(rebasing: bytes[previousBytes])) {
                // The line before, written again (a logger's retry): taken once.
                repeatedLines.append(lineNumber)
                continue
            }
            guard time > previousTime else {
                return .failure(IMUSampleFileError(source: source, line: lineNumber, column: layout.names[layout.wanted[0]],
                    "time \(JSONObjectWriter.shortest(time)) is not after line \(previousLine)'s \(JSONObjectWriter.shortest(previousTime)): the samples must be in time order, each at its own time"))
            }
            previousTime = time
            previousLine = lineNumber
            previousBytes = a..<b
            samples.append(IMUSample(time: time,
                                     accelerometer: Vector3(values[1], values[2], values[3]),
                                     gyroscope: layout.hasGyroscope ? Vector3(values[4], values[5], values[6]) : .zero,
                                     magnetometer: layout.hasMagnetometer && !noField ? Vector3(values[m], values[m + 1], values[m + 2]) : nil))
        }
        guard let layout else {
            return .failure(IMUSampleFileError(source: source, "empty: expected a header line such as \(header) and one line per sample"))
        }
        guard !samples.isEmpty else {
            return .failure(IMUSampleFileError(source: source, "a header and no samples"))
        }
        var file = IMUSampleFile(samples: samples, hasMagnetometer: layout.hasMagnetometer)
        file.hasGyroscope = layout.hasGyroscope
        file.metadata = metadata
        file.repeatedLines = repeatedLines
        return .success(file)
    }

    private static func makeLayout(_ names: [String], source: String, line: Int, requireGyroscope: Bool) -> Result<Layout, IMUSampleFileError> {
        let optional = requireGyroscope ? "the mag columns are optional" : "the gyr and mag columns are optional"
        let hint = "expected a header such as \(header) (\(optional))"
        if names.allSatisfy({ number(Array($0.utf8)) != nil }) {
            return .failure(IMUSampleFileError(source: source, line: line, "numbers where the header should be; \(hint)"))
        }
        var seen = Set<String>()
        for name in names where !name.isEmpty {
            guard seen.insert(name).inserted else {
                return .failure(IMUSampleFileError(source: source, line: line, column: name, "named twice in the header"))
            }
        }
        func index(_ name: String) -> Result<Int, IMUSampleFileError> {
            guard let i = names.firstIndex(of: name) else {
                return .failure(IMUSampleFileError(source: source, line: line, column: name, "missing from the header (\(names.joined(separator: ","))); \(hint)"))
            }
            return .success(i)
        }
        let gyroscopePresent = requireGyroscope || gyroscopeColumns.contains(where: names.contains)
        let magnetometerPresent = magnetometerColumns.contains(where: names.contains)
        var wanted: [Int] = []
        for name in [timeColumn] + accelerometerColumns + (gyroscopePresent ? gyroscopeColumns : [])
            + (magnetometerPresent ? magnetometerColumns : []) {
            switch index(name) {
            case .success(let i): wanted.append(i)
            case .failure(let e): return .failure(e)
            }
        }
        return .success(Layout(names: names, wanted: wanted, hasGyroscope: gyroscopePresent, hasMagnetometer: magnetometerPresent))
    }

    private static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> (Int, Int) {
        var a = start, b = end
        while a < b && (bytes[a] == 0x20 || bytes[a] == 0x09 || bytes[a] == 0x0D) { a += 1 }
        while b > a && (bytes[b - 1] == 0x20 || bytes[b - 1] == 0x09 || bytes[b - 1] == 0x0D) { b -= 1 }
        return (a, b)
    }

    /// A decimal number (`-1.5`, `3.9136e-19`, `nan`) in `field`, or nil.
    private static func number<C: Collection<UInt8>>(_ field: C) -> Double? {
        guard !field.isEmpty, field.count < 64 else { return nil }
        return Double(String(decoding: field, as: UTF8.self))
    }

    // MARK: Units

    /// Why the magnetometer columns are not in µT, judged on the whole file (nil: they may be): online
    /// calibration measures the field against WMM's in µT, though the filter takes any unit. A median |mag|
    /// under 5 is gauss (the Earth's field is 0.22–0.67 G), one of 5,000 or more is nT; 150–2,000 could be mG
    /// or µT behind a large hard iron, and is not judged.
    public func magnetometerUnitProblem(source: String) -> IMUSampleFileError? {
        let norms = samples.compactMap { $0.magnetometer?.length }.filter(\.isFinite).sorted()
        guard !norms.isEmpty else { return nil }
        let median = norms[norms.count / 2], shown = String(median.rounded(toPlaces: 3))
        let columns = Self.magnetometerColumns.joined(separator: ",")
        if median < 5 {
            return IMUSampleFileError(source: source, column: columns,
                "the median |mag| is \(shown): the magnetometer looks like it is in gauss; give µT (multiply by 100)")
        }
        if median >= 5000 {
            return IMUSampleFileError(source: source, column: columns,
                "the median |mag| is \(shown): the magnetometer looks like it is in nT; give µT (multiply by 0.001)")
        }
        return nil
    }

    private static func checkUnits(_ file: IMUSampleFile, source: String) throws(IMUSampleFileError) {
        let accColumns = accelerometerColumns.joined(separator: ",")
        let acc = file.samples.map(\.accelerometer.length).sorted()
        let median = acc[acc.count / 2]
        let shown = String(median.rounded(toPlaces: 3))
        switch median {
        case 4...20:
            break
        case 0.5...2:
            throw IMUSampleFileError(source: source, column: accColumns,
                "the median |acc| is \(shown): the accelerometer looks like it is in g; give m/s² (multiply by 9.80665)")
        case 500...2000:
            throw IMUSampleFileError(source: source, column: accColumns,
                "the median |acc| is \(shown): the accelerometer looks like it is in mg; give m/s² (multiply by 0.00980665)")
        default:
            throw IMUSampleFileError(source: source, column: accColumns,
                "the median |acc| is \(shown), expected about 9.8: give the specific force in m/s²")
        }

        guard file.hasGyroscope else { return }
        let gyro = file.samples.map(\.gyroscope.length).sorted()
        let quiet = gyro[gyro.count / 10]
        let fast = gyro[min(gyro.count - 1, gyro.count * 99 / 100)]
        let gyrColumns = gyroscopeColumns.joined(separator: ",")
        if quiet > 20 * .pi / 180 || fast > 40 {
            throw IMUSampleFileError(source: source, column: gyrColumns,
                "the gyroscope looks like it is in °/s (the quietest tenth of the samples turns at \(String(quiet.rounded(toPlaces: 3))) or more, "
                + "the fastest hundredth at \(String(fast.rounded(toPlaces: 1))) or more); give rad/s (multiply by π/180 = 0.0174533)")
        }
    }
}

extension Double {
    func rounded(toPlaces places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}
