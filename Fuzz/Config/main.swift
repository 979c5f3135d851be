// libFuzzer target for the config reader (`AgentConfig.parse`, YAML through Yams).
//
// Built with `-sanitize=fuzzer -DFUZZING` (scripts/fuzz) it is a libFuzzer binary; a plain build is a
// corpus replayer: `swift run fuzz-config [DIR…]` (default Fuzz/corpus/config) runs every file through
// the same check. Tests/BearingAgentTests/ConfigCorpusTests.swift replays the corpus the same way.
//
// Check, for any bytes (read as UTF-8, bad sequences replaced): parsing returns a config or throws a
// ConfigError with a message; it never crashes.
import BearingAgent
import Foundation

enum ConfigCheck {
    /// Returns a description of the failure, nil when the check holds.
    static func failure(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        do throws(ConfigError) {
            _ = try AgentConfig.parse(yaml: text, source: "fuzz.yaml")
        } catch {
            if error.message.isEmpty { return "ConfigError with an empty message" }
        }
        return nil
    }

    static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) {
            FileHandle.standardError.write(Data("fuzz-config: \(f)\n".utf8))
            abort()
        }
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    ConfigCheck.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`
/// (pointer and integer arguments only, passed the same way by the Swift and C conventions).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// SwiftPM links every executable with `--defsym main=<module>_main`, so libFuzzer's own `main` is not
/// the entry point: this one hands the command line to libFuzzer's driver instead.
@main
struct FuzzerEntry {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            guard let data else { ConfigCheck.check([]); return 0 }
            return fuzz(data, size)
        })
    }
}
#else
@main
struct Replay {
    static func main() {
        var args = Array(CommandLine.arguments.dropFirst())
        if args.isEmpty { args = ["Fuzz/corpus/config"] }
        var count = 0
        for path in args {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
                FileHandle.standardError.write(Data("fuzz-config: no such file or directory: \(path)\n".utf8))
                exit(2)
            }
            let files: [String]
            if isDir.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files = names.filter { !$0.hasPrefix(".") }.sorted().map { "\(path)/\($0)" }
            } else {
                files = [path]
            }
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("fuzz-config: cannot read \(file)\n".utf8))
                    exit(2)
                }
                ConfigCheck.check([UInt8](data))
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }
}
#endif
