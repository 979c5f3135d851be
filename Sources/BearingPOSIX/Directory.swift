#if canImport(Glibc)
import Glibc
#endif

/// Directories: listing, a private temporary one, and removing a flat one. Each call wrapped once, its
/// error naming the operation and the path.
public enum Directory {
    /// The names in `path` (not "." or ".."), unsorted.
    public static func names(_ path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else { throw SystemError("opendir", path) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// A new directory, mode 0700, named `prefix` and six random characters (mkdtemp).
    public static func makeTemporary(prefix: String) throws(SystemError) -> String {
        var template = Array("\(prefix)XXXXXX".utf8CString)
        // The name is read while the buffer mkdtemp filled in is still in scope.
        let made = template.withUnsafeMutableBufferPointer { b -> String? in mkdtemp(b.baseAddress!).map { String(cString: $0) } }
        guard let made else { throw SystemError("mkdtemp", "\(prefix)XXXXXX") }
        return made
    }

    /// Removes `path` and the files in it (a directory without subdirectories); what cannot be removed stays.
    public static func removeFlat(_ path: String) {
        for name in (try? names(path)) ?? [] { unlink("\(path)/\(name)") }
        rmdir(path)
    }
}
