import BearingModel

/// The self-test's result as a table for the terminal, and as a Markdown report to paste into an issue.
public struct SelfTestReport: Sendable {
    public var lines: [SelfTestLine]
    /// Versions, board, kernel … as `key: value`, in order (no secrets: the caller puts in only what may be shared).
    public var facts: [(String, String)]

    public init(lines: [SelfTestLine], facts: [(String, String)] = []) {
        self.lines = lines
        self.facts = facts
    }

    public var worst: SelfTestLine.Verdict { lines.map(\.verdict).max() ?? .pass }
    public var failed: [SelfTestLine] { lines.filter { $0.verdict == .fail } }

    /// A position rounded to 0.01° (about 1 km), unless `precise`.
    public static func position(latitude: Double, longitude: Double, precise: Bool) -> String {
        precise ? String(printf: "%.6f, %.6f", latitude, longitude) : String(printf: "%.2f, %.2f (rounded to about 1 km)", latitude, longitude)
    }

    public var table: String {
        let header = ["sensor", "check", "measured", "expected", "verdict"]
        let rows = lines.map { [$0.sensor, $0.check, $0.measured, $0.expected, $0.verdict.rawValue.uppercased()] }
        let widths = (0..<header.count).map { c in ([header] + rows).map { $0[c].count }.max()! }
        func format(_ r: [String]) -> String {
            r.enumerated().map { i, cell in i == r.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count) }.joined(separator: "  ")
        }
        var out = [format(header)] + rows.map(format)
        let fixes = lines.filter { $0.verdict >= .warn && $0.fix != nil }
        if !fixes.isEmpty {
            out.append("")
            for l in fixes { out.append("\(l.verdict.rawValue.uppercased()) \(l.sensor) \(l.check): \(l.fix!)") }
        }
        out.append("")
        out.append(summary)
        return out.joined(separator: "\n")
    }

    public var summary: String {
        let count = { (v: SelfTestLine.Verdict) in self.lines.filter { $0.verdict == v }.count }
        return "\(count(.pass)) passed, \(count(.warn)) warnings, \(count(.fail)) failed"
    }

    public var markdown: String {
        func cell(_ s: String) -> String { s.replacing("|", with: "\\|") }
        var out = ["## bearing selftest", ""]
        for (k, v) in facts { out.append("- **\(cell(k))**: \(cell(v))") }
        out += ["", "| sensor | check | measured | expected | verdict |", "|---|---|---|---|---|"]
        for l in lines {
            out.append("| \(cell(l.sensor)) | \(cell(l.check)) | \(cell(l.measured)) | \(cell(l.expected)) | \(l.verdict == .pass ? "pass" : "**\(l.verdict.rawValue)**") |")
        }
        let fixes = lines.filter { $0.verdict >= .warn && $0.fix != nil }
        if !fixes.isEmpty {
            out += ["", "### What to do"]
            for l in fixes { out.append("- \(l.sensor) \(l.check): \(cell(l.fix!))") }
        }
        out += ["", summary, ""]
        return out.joined(separator: "\n")
    }
}
