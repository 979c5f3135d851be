import BearingConfig
import BearingDaemon
import BearingYAML
import Foundation
import TestSupport
import XCTest

/// `bearing report`'s config: every secret `<redacted>`, every other byte as written.
final class ConfigRedactionTests: XCTestCase {
    let r = ConfigRedaction.redact

    func testPlainValuesGoCommentsAndLayoutStay() {
        let yaml = """
            # the boat's config
            mqtt:
              username: boat7          # at the broker
              password: hunter2-plain  # never shown
              password_file: /etc/bearing/mqtt-password
              tls:
                key: /etc/bearing/client.key
            wifi:
              PSK: correct-horse
              api_token: tok-123
              token_file: /etc/bearing/token

            """
        XCTAssertEqual(r(yaml), """
            # the boat's config
            mqtt:
              username: boat7          # at the broker
              password: <redacted>  # never shown
              password_file: /etc/bearing/mqtt-password
              tls:
                key: /etc/bearing/client.key
            wifi:
              PSK: <redacted>
              api_token: <redacted>
              token_file: /etc/bearing/token

            """)
    }

    func testQuotedValuesKeepTheirQuotes() {
        let yaml = """
            a:
              password: "say \\"hi\\" # not a comment"
              secret: 'it''s: here'
              passphrase: "two
                lines"
            b: 1

            """
        XCTAssertEqual(r(yaml), """
            a:
              password: "<redacted>"
              secret: '<redacted>'
              passphrase: "<redacted>"
            b: 1

            """)
    }

    func testFlowMappingsAndListsAndBlockScalars() {
        XCTAssertEqual(r("mqtt: {username: u, password: p4ss word, port: 1}\n"), "mqtt: {username: u, password: <redacted>, port: 1}\n")
        XCTAssertEqual(r("x: [{token: \"t,1\"}, {psk: abc}]\n"), "x: [{token: \"<redacted>\"}, {psk: <redacted>}]\n")
        XCTAssertEqual(r("secret: [alpha, {beta: gamma}]\nnext: 1\n"), "secret: [<redacted>, {<redacted>: <redacted>}]\nnext: 1\n")
        XCTAssertEqual(r("secret: |\n  line one\n\n  line two\nnext: 1\n"), "secret: <redacted>\nnext: 1\n")
        XCTAssertEqual(r("- password: >-\n    folded\n    text\n- other: 2\n"), "- password: <redacted>\n- other: 2\n")
        XCTAssertEqual(r("password: first\n  continued\n  on lines # c\nnext: 1\n"), "password: <redacted> # c\nnext: 1\n")
    }

    func testAnchorsTagsAndAliases() {
        XCTAssertEqual(r("password: !!str &pw 12345678\nother: *pw\n"), "password: !!str &pw <redacted>\nother: *pw\n")
        XCTAssertEqual(r("x: &pw longsecretvalue\nmqtt:\n  password: *pw\n"), "x: &pw <redacted>\nmqtt:\n  password: *pw\n")
    }

    func testURLPasswordsAnywhere() {
        XCTAssertEqual(r("mqtt:\n  broker: mqtt://boat7:s3cr3t@broker.example:1883\n"), "mqtt:\n  broker: mqtt://boat7:<redacted>@broker.example:1883\n")
        XCTAssertEqual(r("# was mqtts://boat7:old-one@old.example\nb: 1\n"), "# was mqtts://boat7:<redacted>@old.example\nb: 1\n")
        XCTAssertEqual(r("u: \"http://a:p w\\\"x@h/p\"\n"), "u: \"http://a:<redacted>@h/p\"\n")
        XCTAssertEqual(r("u: 'http://a:it''s@h'\n"), "u: 'http://a:<redacted>@h'\n")
        for kept in ["u: mqtt://broker.example:1883\n", "u: mqtt://user@host\n", "u: mailto:someone@example.org\n"] {
            XCTAssertEqual(r(kept), kept)
        }
        XCTAssertEqual(ConfigRedaction.scrub("connecting to mqtt://u:pw1@h; pw1 again, and hunter22", secrets: ["hunter22", "pw1"]),
                       "connecting to mqtt://u:<redacted>@h; pw1 again, and <redacted>",
                       "URL passwords always; other secrets when long enough to search for")
    }

    func testCommentedOutSecretsGoToo() {
        XCTAssertEqual(r("mqtt:\n  # password: old-secret\n  #token=abc\n  username: u\n"), "mqtt:\n  # password: <redacted>\n  #token=<redacted>\n  username: u\n")
    }

    func testSecretsElsewhereInTheTextAreFound() {
        XCTAssertEqual(ConfigRedaction.secrets(in: "a: {password: hunter22}\nb: mqtt://u:pw9@h\n").sorted(), ["hunter22", "pw9"])
        XCTAssertEqual(r("password: hunter22\n# hunter22 was the old one\n"), "password: <redacted>\n# <redacted> was the old one\n")
    }

    func testUnparsableTextIsRedactedLineByLine() {
        let yaml = """
            mqtt:
              password: "unterminated
                still the password
              username: u
              broker: mqtt://u:pw@h
            token: [a, b
            """
        let out = r(yaml)
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertTrue(lines[0].hasPrefix("# bearing report: not valid YAML ("), out)
        XCTAssertTrue(lines[0].hasSuffix("); secrets redacted line by line, conservatively"), out)
        XCTAssertEqual(Array(lines.dropFirst()), [
            "mqtt:", "  password: <redacted>", "    <redacted>", "  username: u", "  broker: mqtt://u:<redacted>@h", "token: <redacted>",
        ])
    }

    func testTextWithoutSecretsIsUnchanged() throws {
        let example = try String(contentsOf: repoRoot.appendingPathComponent("systemd/bearing.yaml"), encoding: .utf8)
        XCTAssertEqual(r(example), example)
        for text in ["", "# only a comment\n", "a: 1", "a: \"x\"\r\nb: 'y'\r\n", "é: ü  # ö\npassword_file: /x\n"] {
            XCTAssertEqual(r(text), text)
        }
        XCTAssertEqual(r("é: {ü: 1, password: ö-secret}\r\nb: 2\r\n"), "é: {ü: 1, password: <redacted>}\r\nb: 2\r\n", "marks count characters, not bytes")
    }

    func testAliasesExpandingWithoutBoundAreRedactedLineByLine() {
        var yaml = "a: &a [x, x, x, x, x, x, x, x, x]\n"
        for i in 1...8 { yaml += "l\(i): &l\(i) [*\(i == 1 ? "a" : "l\(i - 1)"), *\(i == 1 ? "a" : "l\(i - 1)"), *\(i == 1 ? "a" : "l\(i - 1)")]\n" }
        yaml += "secret: *l8\n"
        let started = Date()
        let out = r(yaml)
        XCTAssertLessThan(Date().timeIntervalSince(started), 5)
        XCTAssertTrue(out.hasPrefix("# bearing report: the secrets could not all be placed"), out)
        XCTAssertTrue(out.hasSuffix("secret: <redacted>\n"), out)
    }
}
