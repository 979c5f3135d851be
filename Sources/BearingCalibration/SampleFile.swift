import BearingModel
/// Raw magnetometer samples read from text: CSV or whitespace-separated columns, header lines allowed,
/// `#` comment lines skipped. Bearing's own recordings (`bearing calibrate --record`) start with a
/// `# bearing-samples chip=… device=… units=uT` line, whose keys are kept in `metadata`.
public struct SampleFile: Sendable {
    public var samples: [Vector3]
    /// Header keys of a Bearing recording (`chip`, `device`, `units`).
    public var metadata: [String: String]
    /// The columns read, 1-based, and their header names when there was a header.
    public var columns: [Int]
    public var columnNames: [String]?
    /// Data lines skipped as unreadable, with the first few reasons.
    public var skipped: Int
    public var skippedExamples: [String]

    public static let recordingMarker = "# bearing-samples"

    /// Which three columns to read: 1-based numbers or header names, e.g. `4,5,6` or `mx,my,mz`.
    public enum ColumnSelection: Equatable, Sendable {
        case automatic
        case numbers([Int])
        case names([String])

        public init(parsing text: String) throws(CalibrationFitError) {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
            guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
                throw CalibrationFitError("--columns \(text): give three columns, e.g. 4,5,6 or mx,my,mz")
            }
            if parts.allSatisfy({ Int($0) != nil }) {
                let n = parts.map { Int($0)! }
                guard n.allSatisfy({ $0 >= 1 }) else { throw CalibrationFitError("--columns \(text): columns count from 1") }
                guard Set(n).count == 3 else { throw CalibrationFitError("--columns \(text): a column appears twice") }
                self = .numbers(n)
            } else {
                self = .names(parts.map { $0.lowercased() })
            }
        }
    }

    /// Parses `text`; `source` names the file in errors.
    public static func parse(_ text: String, source: String, columns selection: ColumnSelection = .automatic) throws(CalibrationFitError) -> SampleFile {
        var metadata: [String: String] = [:]
        var header: [String]?
        var chosen: [Int]?
        var samples: [Vector3] = []
        var skipped = 0
        var examples: [String] = []
        var lineNumber = 0
        var dataLines = 0

        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty { continue }
            if line.hasPrefix("#") {
                if line.hasPrefix(recordingMarker) {
                    for pair in line.dropFirst(recordingMarker.count).split(separator: " ") {
                        let kv = pair.split(separator: "=", maxSplits: 1)
                        if kv.count == 2 { metadata[String(kv[0])] = String(kv[1]) }
                    }
                }
                continue
            }
            let fields = split(line)
            let numbers = fields.map { Double($0) }
            let isNumeric = numbers.allSatisfy { $0 != nil } && !fields.isEmpty
            if chosen == nil {
                if !isNumeric {
                    // A header line before the data; the last one names the columns.
                    if dataLines == 0 { header = fields.map { $0.lowercased() }; continue }
                }
                chosen = try pick(selection, header: header, width: fields.count, source: source, line: lineNumber)
            }
            dataLines += 1
            guard let columns = chosen else { continue }
            var values: [Double] = []
            var problem: String?
            for c in columns {
                guard c <= fields.count else { problem = "has \(fields.count) columns, column \(c) is missing"; break }
                guard let v = Double(fields[c - 1]), v.isFinite else { problem = "column \(c) \"\(fields[c - 1].prefix(20))\" is not a number"; break }
                values.append(v)
            }
            if let problem {
                skipped += 1
                if examples.count < 3 { examples.append("\(source) line \(lineNumber): \(problem)") }
                continue
            }
            samples.append(Vector3(values[0], values[1], values[2]))
        }
        guard let columns = chosen, !samples.isEmpty else {
            throw CalibrationFitError("\(source): no samples found (expected lines of three numbers such as \"12.5,-3.1,40.2\" or \"12.5 -3.1 40.2\")")
        }
        if skipped * 20 > dataLines {
            throw CalibrationFitError("\(source): \(skipped) of \(dataLines) data lines unreadable; first: \(examples.joined(separator: "; "))")
        }
        let names = header.map { h in columns.map { $0 <= h.count ? h[$0 - 1] : "?" } }
        return SampleFile(samples: samples, metadata: metadata, columns: columns, columnNames: names,
                          skipped: skipped, skippedExamples: examples)
    }

    static func split(_ line: Substring) -> [Substring] {
        if line.contains(",") {
            return line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
        }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == ";" })
    }

    static func pick(_ selection: ColumnSelection, header: [String]?, width: Int, source: String, line: Int) throws(CalibrationFitError) -> [Int] {
        switch selection {
        case .numbers(let n):
            if let bad = n.first(where: { $0 > width }) {
                throw CalibrationFitError("\(source) line \(line): --columns asks for column \(bad), the data have \(width)")
            }
            return n
        case .names(let names):
            guard let header else {
                throw CalibrationFitError("\(source): --columns by name needs a header line naming the columns; give numbers instead, e.g. 4,5,6")
            }
            var out: [Int] = []
            for name in names {
                guard let i = header.firstIndex(of: name) else {
                    throw CalibrationFitError("\(source): no column named \"\(name)\"; the header has \(header.joined(separator: ", "))")
                }
                out.append(i + 1)
            }
            return out
        case .automatic:
            if let header {
                for names in [["x", "y", "z"], ["mx", "my", "mz"], ["mag_x", "mag_y", "mag_z"], ["magx", "magy", "magz"]] {
                    let found = names.compactMap { header.firstIndex(of: $0) }
                    if found.count == 3 { return found.map { $0 + 1 } }
                }
            }
            if width == 3 { return [1, 2, 3] }
            throw CalibrationFitError("\(source) line \(line): \(width) columns and no x,y,z or mx,my,mz header; pick three with --columns, e.g. --columns 4,5,6")
        }
    }
}
