import ArgumentParser
import BearingPOSIX
import BearingWebDoor

/// `bearing web-credential`: sets the web door's credential.
struct WebCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-credential",
        abstract: "Set the web door's credential (the password a page logs in with).",
        discussion: """
            Writes the file atomically, mode 0640, group bearing. Without --stdin it makes a credential of 20 random \
            characters and prints it once; it is never shown again. The daemon reads the file at each login.
            """)

    @Option(help: ArgumentHelp("The credential file.", valueName: "file")) var file = WebSettings().credentialFile
    @Flag(help: "Read the credential from standard input (its first line) instead of making one.") var stdin = false

    func run() throws {
        // Nothing on standard input is an empty credential: refused as too short.
        let secret = stdin ? readLine(strippingNewline: true) ?? "" : WebCredentialFile.generate()
        if let problem = WebCredentialFile.problem(secret) {
            Syscall.printToStandardError("Error: the credential is refused: \(problem)\n")
            throw ExitCode(ExitStatus.failure)
        }
        do {
            let group = try WebCredentialFile.write(secret, to: file)
            print("wrote \(file) (mode 0640\(group.map { ", group \($0)" } ?? ""))")
        } catch {
            Syscall.printToStandardError("Error: \(error)\n")
            throw ExitCode(ExitStatus.failure)
        }
        if !stdin { print("credential: \(secret)\n(shown this once: keep it where you keep passwords)") }
    }
}
