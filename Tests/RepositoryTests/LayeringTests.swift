import Foundation
import TestSupport
import XCTest

/// The house's rules, checked on the sources themselves: the target graph (Package.swift), no dependency
/// loop between the folders of a target, and a line budget per target.
final class LayeringTests: XCTestCase {
    /// Every target's direct dependencies, from Package.swift (targets and products alike, by name).
    static func targetDependencies() throws -> [String: [String]] { try packageTargets().mapValues(\.dependencies) }

    struct Declared {
        var dependencies: [String]
        /// The folder of its sources, from the repository's root.
        var path: String
    }

    /// Every target of Package.swift: its direct dependencies (targets and products by name) and its folder.
    static func packageTargets() throws -> [String: Declared] {
        let text = try String(contentsOf: repoRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        var out: [String: Declared] = [:]
        let target = try NSRegularExpression(pattern: #"\.(target|executableTarget|testTarget|systemLibrary)\(\s*name: "([^"]+)"(?:,\s*dependencies: \[(.*?)\])?(?:,\s*path: "([^"]+)")?"#,
                                             options: [.dotMatchesLineSeparators])
        let name = try NSRegularExpression(pattern: #""([^"]+)"|\.product\(name: "([^"]+)""#)
        for m in target.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let kind = String(text[Range(m.range(at: 1), in: text)!])
            let t = String(text[Range(m.range(at: 2), in: text)!])
            var deps: [String] = []
            if let r = Range(m.range(at: 3), in: text) {
                let list = String(text[r])
                for d in name.matches(in: list, range: NSRange(list.startIndex..., in: list)) {
                    let g = d.range(at: 2).location != NSNotFound ? 2 : 1
                    let n = String(list[Range(d.range(at: g), in: list)!])
                    if n != "OpenCombine" || g == 2 { deps.append(n) }
                }
            }
            let path = Range(m.range(at: 4), in: text).map { String(text[$0]) } ?? "\(kind == "testTarget" ? "Tests" : "Sources")/\(t)"
            out[t] = Declared(dependencies: deps.filter { $0 != "package" }, path: path)
        }
        return out
    }

    /// Modules that come with the toolchain: importing them needs no declaration.
    static let toolchainModules: Set<String> = ["Glibc", "Darwin", "Dispatch", "Foundation", "FoundationEssentials", "Synchronization",
                                                "XCTest", "Testing", "_Concurrency"]

    /// The modules a folder's Swift files import: `import X` lines of code, not of comments or string literals
    /// (a test's Python script says `import socket`).
    static func imports(in folder: String) throws -> [String: Set<String>] {
        let root = repoRoot.appendingPathComponent(folder)
        guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [:] }
        let importLine = try NSRegularExpression(pattern: #"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|func|var|let|typealias|protocol)\s+)?([A-Za-z_]\w*)"#)
        var out: [String: Set<String>] = [:]
        for case let url as URL in e where url.pathExtension == "swift" {
            let code = codeOnly(try String(contentsOf: url, encoding: .utf8))
            for line in code.split(separator: "\n") {
                let l = String(line)
                if let m = importLine.firstMatch(in: l, range: NSRange(l.startIndex..., in: l)) {
                    out[String(l[Range(m.range(at: 1), in: l)!]), default: []].insert(url.lastPathComponent)
                }
            }
        }
        return out
    }

    /// Swift source with comments and string literals (single-line, multi-line and raw) blanked out; lines kept.
    static func codeOnly(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let chars = Array(text)
        var i = 0
        func at(_ k: Int) -> Character? { k < chars.count ? chars[k] : nil }
        while i < chars.count {
            let c = chars[i]
            if c == "/" && at(i + 1) == "/" {
                while i < chars.count && chars[i] != "\n" { i += 1 }
            } else if c == "/" && at(i + 1) == "*" {
                i += 2
                while i < chars.count && !(chars[i] == "*" && at(i + 1) == "/") { if chars[i] == "\n" { out.append("\n") }; i += 1 }
                i += 2
            } else if c == "#" || c == "\"" {
                // A string literal: count the raw string's hashes, then its quotes.
                var hashes = 0
                var j = i
                while at(j) == "#" { hashes += 1; j += 1 }
                guard at(j) == "\"" else { out.append(c); i += 1; continue }
                let multi = at(j + 1) == "\"" && at(j + 2) == "\""
                let quotes = multi ? 3 : 1
                j += quotes
                let close = String(repeating: "\"", count: quotes) + String(repeating: "#", count: hashes)
                let closeChars = Array(close)
                out.append("\"\"")
                while j < chars.count {
                    if hashes == 0 && chars[j] == "\\" { j += 2; continue }
                    if chars[j] == "\n" { out.append("\n"); if !multi { break } }
                    if Array(chars[j..<min(chars.count, j + closeChars.count)]) == closeChars { j += closeChars.count; break }
                    j += 1
                }
                i = j
            } else {
                out.append(c)
                i += 1
            }
        }
        return out
    }

    static func closure(of target: String, in graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var todo = [target]
        while let t = todo.popLast() {
            for d in graph[t] ?? [] where seen.insert(d).inserted { todo.append(d) }
        }
        return seen
    }

    func testTheClientLibraryNeedsOnlyTheWireAndPOSIX() throws {
        let graph = try Self.targetDependencies()
        XCTAssertNotNil(graph["BearingClient"], "Package.swift as read: \(graph.keys.sorted())")
        let closure = Self.closure(of: "BearingClient", in: graph)
        for banned in ["OpenCombine", "OpenCombineDispatch", "BearingPublishing", "BearingCalibration", "BearingAttitude",
                       "BearingDaemon", "BearingSensors", "CMosquitto", "CGPS"] {
            XCTAssertFalse(closure.contains(banned), "BearingClient depends on \(banned): \(closure.sorted())")
        }
        XCTAssertTrue(closure.isSuperset(of: ["BearingWire", "BearingPOSIX"]), "\(closure.sorted())")
    }

    /// Every module a target's files import is one it declares in Package.swift (the toolchain's aside): what
    /// builds only because a dependency happens to bring a module along is caught here.
    func testEveryTargetDeclaresWhatItImports() throws {
        let targets = try Self.packageTargets()
        let modules = Set(targets.keys).union(["OpenCombine", "OpenCombineDispatch", "ArgumentParser", "CombineSchedulers"])
        var checked = 0
        for (name, t) in targets.sorted(by: { $0.key < $1.key }) {
            let imported = try Self.imports(in: t.path)
            checked += imported.isEmpty ? 0 : 1
            for (module, files) in imported.sorted(by: { $0.key < $1.key }) where !Self.toolchainModules.contains(module) {
                XCTAssertTrue(modules.contains(module), "\(name) imports \(module) (\(files.sorted().joined(separator: ", "))), which is neither a target of this package nor a product it uses")
                XCTAssertTrue(module == name || t.dependencies.contains(module),
                              "\(name) imports \(module) in \(files.sorted().joined(separator: ", ")) without declaring it in Package.swift")
            }
        }
        XCTAssertGreaterThan(checked, 30, "the targets' folders were not found: \(targets.mapValues(\.path))")
    }

    /// OpenCombine is the hub's (BearingPublishing) and the daemon's wiring (BearingDaemon: the adapters' subjects
    /// and the compass's stages): no door, no compass, no CLI imports it, and no door's or the compass's public
    /// API names one of its types. Read from real import lines and declarations.
    func testOpenCombineStaysInTheHubAndTheWiring() throws {
        let targets = try Self.packageTargets()
        var users: [String] = []
        for (name, t) in targets where !t.path.hasPrefix("Tests") {
            let imported = try Self.imports(in: t.path)
            if imported["OpenCombine"] != nil || imported["OpenCombineDispatch"] != nil { users.append(name) }
        }
        XCTAssertEqual(users.sorted(), ["BearingPublishing"])
        let combineTypes = try NSRegularExpression(pattern: #"\b(AnyPublisher|AnyCancellable|PassthroughSubject|CurrentValueSubject|Publisher|Cancellable|OCombine)\b"#)
        for target in ["BearingMarine", "BearingMQTT", "BearingCompass", "BearingClient", "BearingDiagnostics", "bearing"] {
            for (_, _, text) in try Self.sources(of: target) {
                for line in text.split(separator: "\n") where line.contains("public ") {
                    let l = String(line)
                    XCTAssertNil(combineTypes.firstMatch(in: l, range: NSRange(l.startIndex..., in: l)), "\(target): an OpenCombine type in a public API: \(l)")
                }
            }
        }
        // The pure core (the compass included) and the bridges below it link no OpenCombine; the doors link it only
        // through the hub.
        let graph = targets.mapValues(\.dependencies)
        for t in ["BearingModel", "BearingWire", "BearingCalibration", "BearingAttitude", "BearingCompass", "BearingRecording", "BearingPOSIX",
                  "BearingI2C", "BearingGPSD"] {
            XCTAssertFalse(Self.closure(of: t, in: graph).contains("OpenCombine"), t)
        }
    }

    /// The CLI parses and presents: at most 1,500 lines, and no process, directory, socket or fitting code of its
    /// own (those live in libraries, tested in-process).
    func testTheCommandLineIsThin() throws {
        let files = try Self.sources(of: "bearing")
        let lines = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("Sources/bearing").path)
            .filter { $0.hasSuffix(".swift") }
            .reduce(0) { $0 + (try String(contentsOf: repoRoot.appendingPathComponent("Sources/bearing/\($1)"), encoding: .utf8))
                .split(separator: "\n", omittingEmptySubsequences: false).count }
        XCTAssertLessThanOrEqual(lines, 1_500, "Sources/bearing has \(lines) lines: move workflows into libraries")
        // C calls (not methods of the same name), fitting, and modules the CLI has no business with.
        let banned = try NSRegularExpression(pattern: #"(?<![.\w])(posix_spawn\w*|fork|execv\w*|opendir|readdir|mkdtemp|socket|bind|connect|accept|poll|pipe)\(|\b(MagnetometerCalibrator|AccelerometerCalibrator|EllipsoidFit)\b|import (OpenCombine\w*|CBearingSys|BearingPublishing)\b"#)
        for (path, _, text) in files {
            for m in banned.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let line = text[..<Range(m.range, in: text)!.lowerBound].split(separator: "\n", omittingEmptySubsequences: false).count
                XCTFail("\(path):\(line): \(text[Range(m.range, in: text)!]) belongs in a library")
            }
        }
    }

    func testTheGraphHasNoCycle() throws {
        let graph = try Self.targetDependencies()
        for t in graph.keys {
            XCTAssertFalse(Self.closure(of: t, in: graph).contains(t), "\(t) depends on itself")
        }
    }

    /// Swift sources of a target, comments and string literals left out (lines kept), each with its path from the
    /// repository's root and the folder it is in within the target.
    static func sources(of target: String) throws -> [(path: String, folder: String, text: String)] {
        let root = repoRoot.appendingPathComponent("Sources/\(target)")
        guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, String, String)] = []
        for case let url as URL in e where url.pathExtension == "swift" {
            let code = codeOnly(try String(contentsOf: url, encoding: .utf8))
            let folder = url.deletingLastPathComponent().path.replacingOccurrences(of: root.path, with: ".")
            out.append((url.path.replacingOccurrences(of: repoRoot.path + "/", with: ""), folder, code))
        }
        return out
    }

    func testNoDependencyLoopBetweenTheFoldersOfATarget() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("Sources").path)
        let declaration = try NSRegularExpression(pattern: #"(?m)^(?:public |fileprivate |private )?(?:final |indirect )*(?:class|struct|enum|protocol|actor|typealias) ([A-Za-z_]\w*)"#)
        var checked = 0
        for target in targets.sorted() {
            let files = try Self.sources(of: target)
            let folders = Set(files.map(\.folder))
            guard folders.count > 1 else { continue }
            checked += 1
            var declaredIn: [String: String] = [:]
            for f in files {
                for m in declaration.matches(in: f.text, range: NSRange(f.text.startIndex..., in: f.text)) {
                    declaredIn[String(f.text[Range(m.range(at: 1), in: f.text)!])] = f.folder
                }
            }
            var edges: [String: Set<String>] = [:]
            var why: [String: String] = [:]
            for f in files {
                let words = Set(f.text.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
                for w in words { if let d = declaredIn[w], d != f.folder { edges[f.folder, default: []].insert(d); why["\(f.folder)→\(d)"] = w } }
            }
            if let cycle = Self.cycle(in: edges) {
                let steps = zip(cycle, cycle.dropFirst()).map { "\($0) → \($1) (\(why["\($0)→\($1)"] ?? ""))" }
                XCTFail("\(target): its folders use each other in a loop: \(steps.joined(separator: ", "))")
            }
        }
        XCTAssertGreaterThan(checked, 0, "no target with folders was checked")
    }

    /// A loop in `edges`, of any length, as the nodes along it with the first repeated at the end (nil: none).
    static func cycle(in edges: [String: Set<String>]) -> [String]? {
        var state: [String: Int] = [:]  // 1: on the path, 2: done
        var path: [String] = []
        func visit(_ n: String) -> [String]? {
            state[n] = 1
            path.append(n)
            for m in (edges[n] ?? []).sorted() {
                if state[m] == 1 { return Array(path[path.firstIndex(of: m)!...]) + [m] }
                if state[m] == nil, let c = visit(m) { return c }
            }
            path.removeLast()
            state[n] = 2
            return nil
        }
        for n in edges.keys.sorted() where state[n] == nil { if let c = visit(n) { return c } }
        return nil
    }

    func testTheLoopFinderFindsLoopsOfAnyLength() {
        XCTAssertNil(Self.cycle(in: ["a": ["b"], "b": ["c"], "c": []]))
        XCTAssertEqual(Self.cycle(in: ["a": ["b"], "b": ["a"]]), ["a", "b", "a"])
        XCTAssertEqual(Self.cycle(in: ["a": ["b"], "b": ["c"], "c": ["d"], "d": ["b"]]), ["b", "c", "d", "b"])
        XCTAssertEqual(Self.cycle(in: ["a": ["a"]]), ["a", "a"])
    }

    func testTheCodeScanLeavesOutCommentsAndStringLiterals() {
        let source = "import A // import B\nlet s = \"import C\"\nlet t = \"\"\"\nimport D\n\"\"\"\nlet r = #\"x \"import E\" y\"#\n/* import F */ import G\n"
        let code = Self.codeOnly(source)
        XCTAssertEqual(code.split(separator: "\n", omittingEmptySubsequences: false).count,
                       source.split(separator: "\n", omittingEmptySubsequences: false).count, "lines kept")
        for gone in ["B", "C", "D", "E", "F"] { XCTAssertFalse(code.contains("import \(gone)"), "\(gone) in: \(code)") }
        XCTAssertTrue(code.contains("import A") && code.contains("import G"), code)
    }

    /// The targets Package.swift compiles with -O in debug builds too (`swiftSettings: optimizedInDebug`) have no
    /// `assert` or `assertionFailure`: -O drops them, so the tests, built in debug, would never see them fire.
    func testTheTargetsOptimisedInDebugHaveNoAssert() throws {
        let text = try String(contentsOf: repoRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let optimised = try NSRegularExpression(pattern: #"\.target\(name: "([^"]+)"[^\n]*swiftSettings: optimizedInDebug"#)
        let targets = optimised.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
        XCTAssertTrue(Set(["BearingCompass", "BearingSimulator"]).isSubset(of: targets), "optimised in debug: \(targets)")
        let assertion = try NSRegularExpression(pattern: #"\b(assert|assertionFailure)\s*\("#)
        for target in targets {
            let files = try Self.sources(of: target)
            XCTAssertFalse(files.isEmpty, "no sources for \(target)")
            for (path, _, text) in files {
                for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let l = String(line)
                    if assertion.firstMatch(in: l, range: NSRange(l.startIndex..., in: l)) != nil {
                        XCTFail("\(path):\(n + 1): `assert` vanishes under -O (the target is optimised in debug builds); use `precondition`")
                    }
                }
            }
        }
    }

    /// ~4,000 lines at most per target, so that each stays readable in an afternoon.
    func testNoTargetIsOverItsLineBudget() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: repoRoot.appendingPathComponent("Sources").path)
        var counts: [String: Int] = [:]
        for target in targets {
            counts[target] = try Self.sources(of: target).reduce(0) { $0 + $1.text.split(separator: "\n", omittingEmptySubsequences: false).count }
        }
        for (t, n) in counts where n > 4_000 { XCTFail("\(t) has \(n) lines (budget 4,000): split it by domain") }
        XCTAssertGreaterThan(counts.count, 10)
    }
}
