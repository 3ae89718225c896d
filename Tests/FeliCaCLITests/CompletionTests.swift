import Foundation
import Testing

/// Completion scripts and man pages, generated from the option model, loaded by the real
/// shells and rendered by the real man.
@Suite struct CompletionTests {
    /// What bash offers for the line typed so far (the cursor at its end).
    func bashCompletes(_ line: String) throws -> [String] {
        let script = """
            source <(felica --generate-completion-script bash)
            COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
            _felica
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try run(program: "/bin/bash", ["-c", script, "bash", line])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.split(separator: "\n").map(String.init)
    }

    @Test func bashLoadsTheScript() throws {
        let r = try run(program: "/bin/bash", ["-c", "source <(felica --generate-completion-script bash); complete -p felica"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "complete -F _felica felica\n")
        #expect(r.stderr.isEmpty, "\(r.stderr)")
    }

    @Test(arguments: [
        ("felica bal", ["balance"]),
        ("felica -v hist", ["history"]),
        ("felica poll --dia", ["--dialect"]),
        ("felica poll --dialect s", ["sony"]),
        ("felica trace s", ["show"]),
        ("felica help tr", ["trace"]),
        ("felica bench order --model ", ["ios", "rf"]),
        ("felica order --model ", ["ios", "rf"]),
        ("felica poll --device virtual:su", ["suica"]),
        ("felica poll --device us", ["usb"]),
        ("felica poll --device virtual:suica --js", ["--json"]),
        ("felica --generate-completion-script ", ["bash", "zsh", "fish"]),
        ("felica read --service 090f --sys", ["--system"]),
    ] as [(String, [String])])
    func bashOffersCommandsOptionsAndValues(_ line: String, _ expected: [String]) throws {
        #expect(try bashCompletes(line) == expected)
    }

    @Test func bashCompletesFilesWhereAFileIsExpected() throws {
        let dir = temporaryPath("completion")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: dir + "/suica-trace.jsonl", contents: Data()))
        #expect(try bashCompletes("felica trace show \(dir)/suica-t") == [dir + "/suica-trace.jsonl"])
        #expect(try bashCompletes("felica balance --trace \(dir)/suica-t") == [dir + "/suica-trace.jsonl"])
        // A free-text value offers nothing rather than files.
        #expect(try bashCompletes("felica read --service \(dir)/suica-t") == [])
    }

    @Test func fishOffersCommandsOptionsAndValues() throws {
        func fish(_ line: String) throws -> [String] {
            let r = try run(program: "/usr/bin/fish", ["-c", "felica --generate-completion-script fish | source; complete -C\"$argv[1]\"", line])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.isEmpty, "\(r.stderr)")
            return r.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        #expect(try fish("felica po") == ["poll"])
        #expect(try fish("felica poll --dialect ").sorted() == ["acr122u", "part3", "raw", "sony"])
        #expect(try fish("felica trace ").sorted() == ["export", "redact", "show"])
        #expect(try fish("felica bench order --model ").sorted() == ["ios", "rf"])
        // fish 4 also offers options the typed letters match in order (--pl: --population
        // too); fish 3.6 only by prefix. Both take --plis to --plist alone.
        #expect(try fish("felica order --plis") == ["--plist"])
    }

    @Test func zshParsesTheScriptAndOffersCommandsOptionsAndValues() throws {
        let path = temporaryPath("_felica")
        let script = try run(["--generate-completion-script", "zsh"]).stdout
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try run(program: "/usr/bin/zsh", ["-n", path]).status == 0)
        // Outside the completion system: stand-ins for its functions print what they are given.
        let driver = """
            compdef() { :; }
            _describe() { local -a list; list=("${(@P)4}"); print -l -- "${list[@]%%:*}"; }
            compadd() { shift; print -l -- "$@"; }
            _files() { print -- '<files>'; }
            _message() { :; }
            source \(path)
            words=(${=1}); CURRENT=$#words
            [[ $1 == *' ' ]] && { words+=(''); CURRENT=$#words; }
            _felica
            """
        func zsh(_ line: String) throws -> [String] {
            let r = try run(program: "/usr/bin/zsh", ["-f", "-c", driver, "zsh", line])
            #expect(r.status == 0, "\(r.stderr)")
            return r.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try zsh("felica ").contains("balance"))
        #expect(try zsh("felica poll --dialect ") == ["acr122u", "part3", "sony", "raw"])
        #expect(try zsh("felica trace show ") == ["<files>"])
        #expect(try zsh("felica bench order -").contains("--positions"))
    }

    @Test func anUnknownShellIsAUsageError() throws {
        let r = try run(["--generate-completion-script", "bahs"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("'bahs' is not one of bash, zsh, fish; did you mean 'bash'?"), "\(r.stderr)")
    }

    @Test(arguments: ["felica", "felica-sim"])
    func manRendersThePage(_ program: String) throws {
        let page = try run(["--generate-manual"], executable: program)
        #expect(page.status == 0)
        let path = temporaryPath("\(program).1")
        try page.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try run(program: "/usr/bin/man", ["--warnings", "-l", path], environment: ["MANWIDTH": "80", "MAN_KEEP_FORMATTING": ""])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "roff warnings: \(r.stderr)")
        let text = r.stdout
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS"] {
            #expect(text.contains("\n\(section)\n"), "\(section)")
        }
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    @Test func theManPageNamesEveryCommandAndOption() throws {
        let page = try run(["--generate-manual"]).stdout
        for command in ["devices", "poll", "dump", "read", "balance", "history", "watch", "order", "bench order", "trace show", "trace export", "doctor"] {
            #expect(page.contains(".SS \"\(command)\"\n"), "\(command)")
        }
        for option in ["system\\-code", "all\\-systems", "dialect", "before", "population", "plist", "positions", "lenient"] {
            #expect(page.contains("\\fB\\-\\-\(option)\\fR"), "\(option)")
        }
    }
}
