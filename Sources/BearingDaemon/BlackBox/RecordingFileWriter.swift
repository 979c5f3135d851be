import BearingPOSIX
import BearingRecording
#if canImport(Glibc)
import Glibc
#endif

/// A recording file being written: the header, then whole frames, each made durable (`fdatasync`) before
/// the next, so a power cut or `kill -9` loses at most the frame being written and the file stays readable.
final class RecordingFileWriter {
    let path: String
    private let fd: Int32
    private(set) var bytes = 0

    /// Creates `path` (mode 0640, failing if it exists) and writes the header.
    init(path: String) throws(SystemError) {
        self.path = path
        fd = try Syscall.check("open", path) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640) }
        do throws(SystemError) {
            try write(RecordingFormat.header)
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
    }

    deinit { close(fd) }

    /// Appends one frame and syncs it. On a failure (a full disk) the file is cut back to its last whole
    /// frame, so what was written stays readable.
    func write(_ frame: [UInt8]) throws(SystemError) {
        do throws(SystemError) {
            let written: Result<Void, SystemError> = frame.withUnsafeBytes { raw in
                Result { () throws(SystemError) in try Syscall.writeAll(fd, raw, path) }
            }
            try written.get()
            try Syscall.check("fdatasync", path) { fdatasync(fd) }
            bytes += frame.count
        } catch {
            _ = ftruncate(fd, off_t(bytes))
            _ = lseek(fd, off_t(bytes), SEEK_SET)
            throw error
        }
    }
}
