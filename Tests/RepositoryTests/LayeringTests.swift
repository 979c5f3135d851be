import Foundation
import TestSupport
import XCTest

/// The house's rules, checked on the sources themselves: the target graph (Package.swift), no dependency
/// loop between the folders of a target, and a line budget per target.
final class LayeringTests: XCTestCase {
    /// Every target's direct dependencies, from Package.swift (targets and products alike, by name).
    static func targetDependencies() throws -> [String: [String]] {
        let text = try String(contentsOf: repoRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        var graph: [String: [String]] = [:]
        let target = try NSRegularExpression(pattern: #"\.(?:target|executableTarget|testTarget)\(\s*name: "([^"]+)"(?:,\s*dependencies: \[(.*?)\])?"#,
                                             options: [.dotMatchesLineSeparators])
        let name = try NSRegularExpression(pattern: #""([^"]+)"|\.product\(name: "([^"]+)""#)
        for m in target.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let t = String(text[Range(m.range(at: 1), in: text)!])
            var deps: [String] = []
            if let r = Range(m.range(at: 2), in: text) {
                let list = String(text[r])
                for d in name.matches(in: list, range: NSRange(list.startIndex..., in: list)) {
                    let g = d.range(at: 2).location != NSNotFound ? 2 : 1
                    let n = String(list[Range(d.range(at: g), in: list)!])
                    if n != "OpenCombine" || g == 2 { deps.append(n) }
                }
            }
            graph[t] = deps.filter { $0 != "package" }
        }
        return graph
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

    func testOnlyPublishingBuildsOnOpenCombine() throws {
        let graph = try Self.targetDependencies()
        let direct = graph.filter { $0.value.contains("OpenCombine") && !$0.key.hasSuffix("Tests") }.keys.sorted()
        XCTAssertEqual(direct, ["BearingPublishing"])
        // The pure core and the bridges below it link no OpenCombine.
        for t in ["BearingModel", "BearingWire", "BearingCalibration", "BearingAttitude", "BearingRecording", "BearingPOSIX", "BearingI2C", "BearingGPSD"] {
            XCTAssertFalse(Self.closure(of: t, in: graph).contains("OpenCombine"), t)
        }
    }

    func testTheGraphHasNoCycle() throws {
        let graph = try Self.targetDependencies()
        for t in graph.keys {
            XCTAssertFalse(Self.closure(of: t, in: graph).contains(t), "\(t) depends on itself")
        }
    }

    /// Swift sources of a target, comments and string literals left out, with the folder each is in.
    static func sources(of target: String) throws -> [(folder: String, text: String)] {
        let root = repoRoot.appendingPathComponent("Sources/\(target)")
        guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var out: [(String, String)] = []
        for case let url as URL in e where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let code = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> Substring in
                if let r = line.range(of: "//") { return line[..<r.lowerBound] }
                return line
            }.joined(separator: "\n")
            let folder = url.deletingLastPathComponent().path.replacingOccurrences(of: root.path, with: ".")
            out.append((folder, code))
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
            for a in folders {
                for b in edges[a] ?? [] where (edges[b] ?? []).contains(a) {
                    XCTFail("\(target): \(a) and \(b) use each other (\(why["\(a)→\(b)"] ?? ""), \(why["\(b)→\(a)"] ?? ""))")
                }
            }
        }
        XCTAssertGreaterThan(checked, 0, "no target with folders was checked")
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
