// The fuzz targets' checks, in a library so the fuzzers (Fuzz/Session, Fuzz/Config) and the tests that
// replay the corpus (FuzzCorpusTests, ConfigCorpusTests) run the same code.
//
// Session, for any bytes: nothing crashes; every parsed request's `line`, fed to a fresh session, gives
// back exactly that request; a line that `ClientRequest.parse` reads as one request with a JSON argument
// gives exactly that request in a session (a `;` inside a JSON string does not split it); framing does
// not depend on read boundaries (2–3 chunks, split points derived from the data, give the same events).
// The config check (it needs BearingDaemon) is in Fuzz/ConfigChecks, so this library and the tests
// that use it depend on the pure core and BearingMQTT alone.
import BearingModel
import BearingWire
import Foundation
#if canImport(Glibc)
import Glibc
#endif

public enum SessionCheck {
    public static let maxRequestBytes = 4096

    /// Where to cut `bytes` into 2–3 chunks: a function of the data only, so a failure reproduces.
    public static func splitPoints(_ bytes: [UInt8]) -> [Int] {
        let n = bytes.count
        guard n >= 2 else { return [] }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes.prefix(16) { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        h ^= UInt64(n) &* 0x9e37_79b9_7f4a_7c15
        let first = 1 + Int(h % UInt64(n - 1))          // 1 ... n-1
        guard h & 0x100 != 0, first < n - 1 else { return [first] }
        let second = first + 1 + Int((h >> 16) % UInt64(n - 1 - first))   // first+1 ... n-1
        return [first, second]
    }

    /// Runs every check on `bytes`; returns a description of the first failure, nil when all hold.
    public static func failure(_ bytes: [UInt8]) -> String? {
        var whole = ClientSession(maxRequestBytes: maxRequestBytes)
        let events = whole.receive(bytes)

        for case .request(let r) in events {
            // The line can be longer than its source (defaults such as "latest":true are written out),
            // so the round trip is checked without the length limit.
            var fresh = ClientSession(maxRequestBytes: Int.max)
            let back = fresh.receive(Array(r.line.utf8))
            if back != [.request(r)] {
                return "round trip: \(r) wrote \(r.line.debugDescription), which reads back as \(back)"
            }
        }

        // A line that reads as one request with a JSON argument gives exactly that request: a JSON
        // value has no `;` outside its strings, so the session must not split it.
        for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        where line.count <= maxRequestBytes {
            guard let text = String(validating: line, as: UTF8.self),
                  let r = try? ClientRequest.parse(Substring(text)) else { continue }
            let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            guard ["?WATCH=", "?PIPELINE=", "?CALIBRATION="].contains(where: { trimmed.hasPrefix($0) }) else { continue }
            var single = ClientSession(maxRequestBytes: maxRequestBytes)
            let got = single.receive(Array(line) + [0x0A])
            if got != [.request(r)] {
                return "one request: \(text.debugDescription) reads as \(r) alone but the session gives \(got)"
            }
        }

        let cuts = splitPoints(bytes)
        if !cuts.isEmpty {
            var chunked = ClientSession(maxRequestBytes: maxRequestBytes)
            var got: [ClientSession.Event] = []
            var start = 0
            for end in cuts + [bytes.count] {
                got += bytes[start..<end].withUnsafeBytes { chunked.receive($0) }
                start = end
            }
            if got != events {
                return "chunking at \(cuts) of \(bytes.count) bytes: one read gave \(events), chunks gave \(got)"
            }
        }
        return nil
    }

    public static func check(_ bytes: [UInt8]) {
        if let f = failure(bytes) {
            FuzzFailure.abort("fuzz-session", f)
        }
    }
}

/// A failed check: the target's name and what failed on standard error, then abort (libFuzzer writes the input).
public enum FuzzFailure {
    public static func abort(_ target: String, _ failure: String) -> Never {
        FileHandle.standardError.write(Data("\(target): \(failure)\n".utf8))
        Glibc.abort()
    }
}

/// The files of a directory (sorted), or the path itself when it is a file; no Foundation.
public enum ReplayFiles {
    public static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [path] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name == "." || name == ".." || name.hasPrefix(".") { continue }
            names.append(name)
        }
        return names.sorted().map { "\(path)/\($0)" }.filter { !isDirectory($0) }
    }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    public static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buf, 1, buf.count, f)
            if n > 0 { out += buf[0..<n] }
            if n < buf.count { break }
        }
        return ferror(f) == 0 ? out : nil
    }
}

/// The replayer a plain build of a fuzz target is: every file of the given paths (default `corpus`)
/// through `check`, which aborts on a failure.
public enum FuzzReplay {
    public static func main(name: String, defaultPath: String, check: ([UInt8]) -> Void) {
        var args = Array(CommandLine.arguments.dropFirst())
        if args.isEmpty { args = [defaultPath] }
        var count = 0
        for path in args {
            for file in ReplayFiles.list(path) {
                guard let bytes = ReplayFiles.read(file) else {
                    FileHandle.standardError.write(Data("\(name): cannot read \(file)\n".utf8))
                    exit(2)
                }
                check(bytes)
                count += 1
            }
        }
        print("replayed \(count) inputs")
    }
}

/// A fuzz target's `main`: under `-DFUZZING` (scripts/fuzz) it hands the command line to libFuzzer's driver
/// with `check` as the test callback; in a plain build it replays the corpus (`FuzzReplay`).
public enum FuzzTarget {
    public static func main(name: String, defaultPath: String, check: @escaping ([UInt8]) -> Void) -> Never {
        #if FUZZING
        activeCheck = check
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in LLVMFuzzerTestOneInput(data, size) })
        #else
        FuzzReplay.main(name: name, defaultPath: defaultPath, check: check)
        exit(0)
        #endif
    }
}

#if FUZZING
/// The running target's check: set once in `FuzzTarget.main`, before libFuzzer calls back (a C callback
/// cannot carry a Swift closure).
nonisolated(unsafe) private var activeCheck: ([UInt8]) -> Void = { _ in }

/// libFuzzer's entry for one input. SwiftPM links every executable with `--defsym main=<module>_main`,
/// so libFuzzer's own `main` is not the entry point, but its objects still name this symbol.
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    activeCheck(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// libFuzzer's `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`
/// (pointer and integer arguments only, passed the same way by the Swift and C conventions).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif
