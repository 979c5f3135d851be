import BearingConfig
import BearingYAML
import BearingDaemon
import Foundation
import TestSupport
import XCTest

/// docs/config-keys.md and bearing.yaml(5) are written from the tables the parser reads with; checked here
/// (`BEARING_REGENERATE_DOCS=1` writes them first).
final class ConfigReferenceTests: XCTestCase {
    let markdownFile = repoRoot.appendingPathComponent("docs/config-keys.md")
    let manFile = repoRoot.appendingPathComponent("docs/man/bearing.yaml.5")

    func testCommittedReferenceIsTheTables() throws {
        let oldPage = try? String(contentsOf: manFile, encoding: .utf8)
        // The page keeps its date until its text changes.
        let date = oldPage.flatMap(Self.date) ?? Self.today
        var page = ConfigReference.manPage(date: date)
        if ProcessInfo.processInfo.environment["BEARING_REGENERATE_DOCS"] == "1" {
            if page != oldPage { page = ConfigReference.manPage(date: Self.today) }
            try FileManager.default.createDirectory(at: manFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try ConfigReference.markdown.write(to: markdownFile, atomically: true, encoding: .utf8)
            try page.write(to: manFile, atomically: true, encoding: .utf8)
        }
        try assertCommitted(markdownFile, "docs/config-keys.md", ConfigReference.markdown)
        try assertCommitted(manFile, "docs/man/bearing.yaml.5", page)
    }

    /// Every documented key is one the parser reads (a wrong value may be refused, naming the key, never as
    /// unknown), and each section refuses any other, naming exactly the documented ones.
    func testEveryDocumentedKeyIsReadAndNoOther() throws {
        var count = 0
        for section in ConfigReference.sections {
            for row in section.rows {
                count += 1
                do { _ = try AgentConfig.parse(yaml: Self.yaml(row.key, "~"), source: "t") } catch {
                    XCTAssertFalse(error.message.contains("unknown key"), error.message)
                    XCTAssertTrue(error.message.contains(row.key) || error.message.contains("needs a magnetometer"), error.message)
                }
            }
            let bad = ConfigReader.join(section.path, "no_such_key")
            let names = section.rows.map { $0.key.dropFirst(section.path.isEmpty ? 0 : section.path.count + 1) }.sorted()
            XCTAssertThrowsError(try AgentConfig.parse(yaml: Self.yaml(bad, "1"), source: "t")) { error in
                let line = bad.split(separator: ".").count
                XCTAssertEqual((error as? ConfigError)?.message,
                               "t:\(line): unknown key \"\(bad)\"; allowed here: \(names.joined(separator: ", "))")
            }
        }
        XCTAssertGreaterThan(count, 80)
        let keys = ConfigReference.sections.flatMap { $0.rows.map(\.key) }
        XCTAssertEqual(Set(keys).count, keys.count, "a key documented twice")
    }

    /// The shipped example, its commented keys uncommented, uses only documented keys.
    func testShippedExampleUsesOnlyDocumentedKeys() throws {
        let text = try String(contentsOf: repoRoot.appendingPathComponent("systemd/bearing.yaml"), encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            // `# key: …` (the marker and one space go) and `  # key: …` are keys too; other comments are prose.
            var s = line.hasPrefix("# ") ? String(line.dropFirst(2)) : line.hasPrefix("#") ? String(line.dropFirst()) : String(line)
            let indent = s.prefix { $0 == " " }
            if s.dropFirst(indent.count).hasPrefix("# ") { s = String(indent + s.dropFirst(indent.count + 2)) }
            return s.range(of: #"^ *[A-Za-z0-9_]+:( |$)"#, options: .regularExpression) != nil ? s : ""
        }.joined(separator: "\n")
        let root = try XCTUnwrap(try YAMLNode.compose(uncommented))
        let rows = Dictionary(uniqueKeysWithValues: ConfigReference.sections.flatMap(\.rows).map { ($0.key, $0) })
        var seen = 0
        func walk(_ node: YAMLNode, _ path: String) {
            guard case .mapping(let mapping, _) = node else { return }
            for (key, value) in mapping {
                let full = ConfigReader.join(path, key.string ?? "")
                seen += 1
                guard let row = rows[full] else { return XCTFail("systemd/bearing.yaml: \(full) is not documented") }
                if row.isSection { walk(value, full) }
            }
        }
        walk(root, "")
        XCTAssertGreaterThan(seen, 60, uncommented)
    }

    /// The file is `expected`, else the first line that differs and how to write the file again.
    func assertCommitted(_ url: URL, _ name: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let committed = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        guard committed != expected else { return }
        let a = committed.split(separator: "\n", omittingEmptySubsequences: false), b = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let i = (0..<min(a.count, b.count)).first { a[$0] != b[$0] } ?? min(a.count, b.count)
        XCTFail("\(name) is not what the tables give: line \(i + 1) is \(i < a.count ? "«\(a[i])»" : "missing"), the tables give "
                    + "\(i < b.count ? "«\(b[i])»" : "nothing"); write it again with: \(ConfigReference.regenerate)", file: file, line: line)
    }

    /// `key.path.name: value` as nested YAML, one level a line.
    static func yaml(_ path: String, _ value: String) -> String {
        path.split(separator: ".").enumerated().map { i, name in String(repeating: "  ", count: i) + name + ":" }.joined(separator: "\n") + " \(value)\n"
    }

    static func date(_ page: String) -> String? {
        page.split(separator: "\n").first { $0.hasPrefix(".TH ") }.map { String($0.split(separator: " ")[3]) }
    }

    static var today: String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd"
        return f.string(from: Date())
    }
}
