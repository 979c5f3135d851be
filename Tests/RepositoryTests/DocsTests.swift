import Foundation
import TestSupport
import XCTest

/// The guide stays true to the code: every type it names in backticks exists in Sources (or is a target, or
/// a type of Swift, Foundation, OpenCombine or libc it names on purpose), and every relative link resolves.
final class DocsTests: XCTestCase {
    /// Names the docs use that are not Bearing's own.
    static let outside: Set<String> = [
        "Sendable", "Codable", "Equatable", "Hashable", "Error", "String", "Double", "Int", "UInt8", "UInt64", "Bool",
        "Array", "Set", "Dictionary", "Optional", "Result", "Task", "AsyncStream", "Mutex", "Atomic", "Duration",
        "CustomStringConvertible", "DispatchQueue", "DispatchSource", "DispatchSourceSignal", "FileHandle", "Data", "URL",
        "PassthroughSubject", "CurrentValueSubject", "AnyPublisher", "AnyCancellable", "Publisher", "Subscriber",
        "Scheduler", "TestScheduler", "Cancellable", "ParsableCommand", "AsyncParsableCommand", "OptionGroup",
        "XCTestCase", "ServiceGroup", "Logger", "FILE", "EAGAIN", "EINTR", "ENOENT", "EBUSY", "EX_CONFIG",
        "SIGTERM", "SIGINT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGKILL", "SIGPIPE", "README", "NaN",
        "InlineArray", "LocalizedError", "SendableMetatype", "ProcessInfo",
        "DecodeHDG",  // Signal K server's NMEA 0183 parser
    ]

    static func markdownFiles() throws -> [URL] {
        var files = [repoRoot.appendingPathComponent("README.md")]
        let docs = repoRoot.appendingPathComponent("docs")
        if let e = FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) {
            for case let url as URL in e where url.pathExtension == "md" { files.append(url) }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// Type names declared anywhere in Sources and Tests (test classes are named in the testing guide), the
    /// targets, and the systemd unit's directives (named in the service guide).
    static func declaredNames() throws -> Set<String> {
        var names: Set<String> = []
        let declaration = try NSRegularExpression(pattern: #"(?:class|struct|enum|protocol|actor|typealias|case)\s+([A-Za-z_]\w*)"#)
        for dir in ["Sources", "Tests"] {
            let root = repoRoot.appendingPathComponent(dir)
            names.formUnion(try FileManager.default.contentsOfDirectory(atPath: root.path))
            guard let e = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in e where url.pathExtension == "swift" {
                let text = try String(contentsOf: url, encoding: .utf8)
                for m in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    names.insert(String(text[Range(m.range(at: 1), in: text)!]))
                }
            }
        }
        let systemd = repoRoot.appendingPathComponent("systemd")
        for file in try FileManager.default.contentsOfDirectory(atPath: systemd.path) {
            let text = try String(contentsOf: systemd.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.first?.isUppercase == true {
                if let eq = line.firstIndex(of: "=") { names.insert(String(line[..<eq])) }
            }
        }
        return names
    }

    func testEveryTypeTheArchitectureNamesExists() throws {
        let url = repoRoot.appendingPathComponent("docs/dev/architecture.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let declared = try Self.declaredNames()
        // `Name`, `Name.member`, `Name<T>`: the leading UpperCamelCase identifier.
        let code = try NSRegularExpression(pattern: #"`([A-Z][A-Za-z0-9]+)(?!\.(?:swift|md)`)(?:[.<(][^`]*)?`"#)
        var named = 0
        for m in code.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(m.range(at: 1), in: text)!])
            guard !Self.outside.contains(name), name.contains(where: \.isLowercase) else { continue }
            named += 1
            XCTAssertTrue(declared.contains(name), "docs/dev/architecture.md names `\(name)`, which neither Sources nor Tests declares")
        }
        XCTAssertGreaterThan(named, 20, "the architecture page should name the types a newcomer meets")
    }

    func testEveryTypeTheGuideNamesExists() throws {
        let declared = try Self.declaredNames()
        let code = try NSRegularExpression(pattern: #"`([A-Z][a-z][A-Za-z0-9]*(?:[A-Z][A-Za-z0-9]*)+)(?!\.(?:swift|md)`)(?:[.<(][^`]*)?`"#)
        for file in try Self.markdownFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            for m in code.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let name = String(text[Range(m.range(at: 1), in: text)!])
                guard !Self.outside.contains(name) else { continue }
                XCTAssertTrue(declared.contains(name), "\(file.lastPathComponent) names `\(name)`, which neither Sources nor Tests declares")
            }
        }
    }

    func testRelativeLinksResolve() throws {
        let link = try NSRegularExpression(pattern: #"\]\(([^)#\s]+)(?:#[^)]*)?\)"#)
        var checked = 0
        for file in try Self.markdownFiles() {
            let text = try String(contentsOf: file, encoding: .utf8)
            for m in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(m.range(at: 1), in: text)!])
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                checked += 1
                let url = file.deletingLastPathComponent().appendingPathComponent(target).standardizedFileURL
                XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "\(file.lastPathComponent) links to \(target), which does not exist")
            }
        }
        XCTAssertGreaterThan(checked, 5)
    }
}
