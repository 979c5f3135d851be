import ArgumentParser
import BearingDiagnostics
import BearingModel
import BearingPOSIX

/// `bearing report` (named so beside BearingWire's `Report`, as `AttitudeCommand` is).
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write one .tar.gz for a bug report: versions, the config (secrets redacted), calibration, journal, black box.",
        discussion: """
            The archive holds MANIFEST.txt (each file and its size, and why a part is missing), versions.txt, \
            config.yaml (passwords, tokens and URL passwords <redacted>), the calibration files, the board \
            profile the unit runs with, journal.txt, security.txt (systemd-analyze security) and blackbox.bbx. \
            It never holds the MQTT password file or a TLS key. It may hold positions, so it is written with \
            mode 0600. Run it with sudo to include the system journal and the service's state directory. Exit \
            status: 0 written, even with parts missing; 1 the archive could not be written.
            """)

    @Option(help: ArgumentHelp("The archive to write, or a directory for it (default: bearing-report-<UTC time>.tar.gz in the current directory).",
                               valueName: "file"))
    var output: String?
    @Option(help: ArgumentHelp("The config file (default: the unit's --config, else /etc/bearing/bearing.yaml).", valueName: "file"))
    var config: String?
    @Option(help: "The systemd unit whose journal and hardening go in.") var unit = "bearing.service"
    @Option(help: ArgumentHelp("Journal lines to include, the latest.", valueName: "n")) var journalLines = 500

    func validate() throws {
        guard (1...1_000_000).contains(journalLines) else {
            throw ValidationError("--journal-lines \(journalLines): must be within 1…1000000")
        }
        guard !unit.isEmpty, !unit.hasPrefix("-"), !unit.contains("/"), !unit.hasControlCharacter, !unit.contains(" ") else {
            throw ValidationError("--unit \(unit.quoted): expected a unit name such as bearing.service")
        }
    }

    func run() throws {
        let report = BugReport(output: output ?? BugReport.defaultName(), config: config, unit: unit, journalLines: journalLines)
        let written: BugReport.Written
        do {
            written = try report.write()
        } catch {
            Syscall.printToStandardError("Error: \(error)\n")
            throw ExitCode(ExitStatus.failure)
        }
        print("wrote \(written.path) (\(written.size) bytes, mode 0600)")
        for part in written.parts where part.bytes == nil {
            print("  without \(part.name): \(part.note)")
        }
        print("No password or key is in it; the journal and the black box may hold positions. MANIFEST.txt lists what it holds.")
    }
}
