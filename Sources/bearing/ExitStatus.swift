import ArgumentParser
import BearingCalibration
import BearingPOSIX

/// Bearing's exit statuses, for every command: sysexits(3) where one fits, so that systemd
/// (`RestartPreventExitStatus=`) and scripts can tell a fault that a restart may cure from one it cannot.
enum ExitStatus {
    /// Done, or stopped by SIGTERM/SIGINT.
    static let success: Int32 = 0
    /// A failure: `run` could not start (a socket, bus or port it needs), a save that cannot be made.
    static let failure: Int32 = 1
    /// A result refused: a calibration below the bar, a board not still or tilted too far, bad samples.
    static let refused: Int32 = 2
    /// EX_USAGE: the command line is wrong (the usage line follows the error).
    static let usage: Int32 = 64
    /// EX_DATAERR: a file that is not what it should be (`replay`: not a recording, newer, corrupt).
    static let dataError: Int32 = 65
    /// EX_CONFIG: the config file or board profile cannot be read or is invalid. No usage line; systemd does
    /// not restart the service for it.
    static let config: Int32 = 78

    /// The text of bearing(1)'s exit statuses (`bearing --help`, the man page).
    static let discussion = """
        Exit status: 0 done, or stopped by SIGTERM or SIGINT; 1 a failure (run: a socket, bus or port \
        it needs could not be had, which a restart may cure; other commands: what they name); 2 a result \
        refused (calibrate or level below the bar or not still, swing not good enough, attitude's bad input, \
        probe finding no device); 64 (EX_USAGE) a wrong command line, followed by the usage line; 65 (EX_DATAERR) replay's \
        file is not a recording, is from a newer version or is corrupt in the middle (the byte offset named); 78 (EX_CONFIG) the config \
        file or board profile cannot be read or is invalid, with one line naming the file, key and value and \
        no usage line (the systemd unit does not restart the service for 64 or 78). 128+N: killed by signal N.
        """

    /// A failure: its message on standard error, then exit status 1.
    static func failure(_ message: String) -> ExitCode {
        Syscall.printToStandardError("Error: \(message)\n")
        return ExitCode(failure)
    }

    /// A result refused: its message on standard error, then exit status 2.
    static func refused(_ message: String) -> ExitCode {
        Syscall.printToStandardError("Error: \(message)\n")
        return ExitCode(refused)
    }

    /// A config file or board profile refused: its error on standard error, then exit status 78.
    static func configError(_ message: String) -> ExitCode {
        Syscall.printToStandardError("Error: \(message)\n")
        return ExitCode(config)
    }
}
