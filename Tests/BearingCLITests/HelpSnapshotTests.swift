import Foundation
import DaemonTestRig
import TestSupport
import XCTest

/// `bearing --help` and `bearing <subcommand> --help` against the snapshots in `help/` (`bearing.txt` for the
/// root, `<subcommand>.txt` for the others), so a change to an option or its help text shows up in review.
/// `BEARING_UPDATE_SNAPSHOTS=1 swift test --filter HelpSnapshotTests` rewrites them instead.
final class HelpSnapshotTests: XCTestCase {
    static let helpDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("help")
    static let rootName = "bearing"
    var updating: Bool { ProcessInfo.processInfo.environment["BEARING_UPDATE_SNAPSHOTS"] == "1" }

    /// Runs `bearing ARGS --help` with a fixed environment: help text shows defaults taken from it (the socket
    /// path from $RUNTIME_DIRECTORY, the state directory from $STATE_DIRECTORY, board profiles from
    /// $BEARING_BOARDS) and wraps at $COLUMNS. (`runBearing` adds to the test's environment; it cannot
    /// take these out.) stdout is a pipe, so the width is ArgumentParser's default of 80.
    func help(_ args: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: bearingBinary.path) else {
            throw XCTSkip("SKIPPED: \(bearingBinary.path) not built (run swift build first)")
        }
        let p = Process()
        p.executableURL = bearingBinary
        p.arguments = args + ["--help"]
        p.environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let command = (["bearing"] + args + ["--help"]).joined(separator: " ")
        XCTAssertEqual(p.terminationStatus, 0, "\(command): \(String(decoding: e, as: UTF8.self))")
        return String(decoding: o, as: UTF8.self)
    }

    /// The subcommands `bearing --help` lists (hidden ones, the benchmarks, are not listed).
    static func subcommands(inRootHelp text: String) -> [String] {
        guard let start = text.range(of: "\nSUBCOMMANDS:\n") else { return [] }
        let name = try! NSRegularExpression(pattern: "^  ([a-z][a-z0-9-]*)(?:  |$)")
        return text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            let line = String(line)
            guard let m = name.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)),
                  let r = Range(m.range(at: 1), in: line) else { return nil }
            return String(line[r])
        }
    }

    func testEveryCommandsHelpMatchesItsSnapshot() throws {
        let root = try help([])
        let subcommands = Self.subcommands(inRootHelp: root)
        for expected in ["run", "watch", "probe", "calibrate", "declination", "simulate-track"] {
            XCTAssertTrue(subcommands.contains(expected), "bearing --help lists \(expected): \(subcommands)\n\(root)")
        }
        if updating { try FileManager.default.createDirectory(at: Self.helpDirectory, withIntermediateDirectories: true) }
        check(Self.rootName, root)
        for sub in subcommands { check(sub, try help([sub])) }

        // A snapshot of a command that is gone is stale.
        let names = Set([Self.rootName] + subcommands)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: Self.helpDirectory.path)) ?? []
        for file in files where file.hasSuffix(".txt") && !names.contains(String(file.dropLast(4))) {
            if updating {
                try FileManager.default.removeItem(at: Self.helpDirectory.appendingPathComponent(file))
            } else {
                XCTFail("help/\(file) is the snapshot of no command in `bearing --help`; delete it, or run with BEARING_UPDATE_SNAPSHOTS=1")
            }
        }
    }

    /// Compares `actual` with `help/<name>.txt` line by line (or rewrites the file when updating).
    func check(_ name: String, _ actual: String, file: StaticString = #filePath, line: UInt = #line) {
        let url = Self.helpDirectory.appendingPathComponent("\(name).txt")
        let command = name == Self.rootName ? "bearing --help" : "bearing \(name) --help"
        if updating {
            do { try actual.write(to: url, atomically: true, encoding: .utf8) } catch { XCTFail("\(url.path): \(error)", file: file, line: line) }
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            XCTFail("no snapshot \(url.path) for `\(command)`; run the tests with BEARING_UPDATE_SNAPSHOTS=1 to write it", file: file, line: line)
            return
        }
        guard expected != actual else { return }
        let diff = Self.diff(expected.components(separatedBy: "\n"), actual.components(separatedBy: "\n"))
        XCTFail("""
            `\(command)` differs from help/\(name).txt (- snapshot, + now); if the change is intended, rerun with \
            BEARING_UPDATE_SNAPSHOTS=1 and review the files' diff:
            \(diff)
            """, file: file, line: line)
    }

    /// A line diff (longest common subsequence): changed lines marked `-`/`+` with their line numbers, two
    /// lines of context around each change, `…` between distant changes.
    static func diff(_ a: [String], _ b: [String]) -> String {
        // lcs[i][j]: length of the longest common subsequence of a[i...] and b[j...].
        var lcs = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in stride(from: a.count - 1, through: 0, by: -1) {
            for j in stride(from: b.count - 1, through: 0, by: -1) {
                lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : max(lcs[i + 1][j], lcs[i][j + 1])
            }
        }
        enum Op { case same(Int, String), removed(Int, String), added(Int, String) }
        var ops: [Op] = []
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if i < a.count, j < b.count, a[i] == b[j] {
                ops.append(.same(i + 1, a[i])); i += 1; j += 1
            } else if i < a.count, j == b.count || lcs[i + 1][j] >= lcs[i][j + 1] {
                ops.append(.removed(i + 1, a[i])); i += 1
            } else {
                ops.append(.added(j + 1, b[j])); j += 1
            }
        }
        let changed = ops.indices.filter { if case .same = ops[$0] { return false } else { return true } }
        var shown = Set<Int>()
        for k in changed { for c in max(0, k - 2)...min(ops.count - 1, k + 2) { shown.insert(c) } }
        var lines: [String] = []
        var last = -1
        for k in shown.sorted() {
            if last >= 0 && k > last + 1 { lines.append("  …") }
            switch ops[k] {
            case .same(let n, let s): lines.append(String(format: "  %3d  ", n) + s)
            case .removed(let n, let s): lines.append(String(format: "- %3d  ", n) + s)
            case .added(let n, let s): lines.append(String(format: "+ %3d  ", n) + s)
            }
            last = k
        }
        return lines.joined(separator: "\n")
    }

    func testTheDiffShowsWhatChanged() {
        let d = Self.diff(["a", "b", "c", "d", "e", "f", "g", "h"], ["a", "b", "C", "d", "e", "f", "g", "h", "i"])
        XCTAssertEqual(d.components(separatedBy: "\n"), [
            "    1  a",
            "    2  b",
            "-   3  c",
            "+   3  C",
            "    4  d",
            "    5  e",
            "  …",
            "    7  g",
            "    8  h",
            "+   9  i",
        ])
    }
}
