import ArgumentParser
import BearingPOSIX
import BearingWebDoor

/// `bearing web-credential`: sets the web door's credential.
struct WebCredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-credential",
        abstract: "Set the web door's credential (the password a page logs in with).",
        discussion: """
            Writes the credential file (web.credential, /etc/bearing/web-credential by default) atomically, mode 0640, \
            group bearing, so that root and the service alone read it. Without --stdin a new credential of 20 random \
            characters is made and printed once, here; it is never shown again, logged or sent to a page. The daemon \
            reads the file at each login: no restart is needed. Logins made with the old credential last until they \
            expire (web.session) or the daemon restarts.
            """)

    @Option(help: ArgumentHelp("The credential file.", valueName: "file")) var file = WebSettings().credentialFile
    @Flag(help: "Read the credential from standard input (its first line) instead of making one.") var stdin = false

    func run() throws {
        var secret = WebCredentialFile.generate()
        if stdin {
            guard let line = readLine(strippingNewline: true) else {
                Syscall.printToStandardError("Error: nothing on standard input\n")
                throw ExitCode(ExitStatus.failure)
            }
            secret = line
        }
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
