import FeliCaDiagnosis

/// The man page of `felica` or `felica-sim` in roff (man(7) macros), generated from the
/// option model: every command with its usage, description and options.
enum ManualPage {
    static func page(for root: any CLICommand.Type, version: String) -> String {
        let c = root.configuration
        let name = c.name
        // No hyphenation, ragged right: option names and device strings stay whole.
        var s = ".TH \(name.uppercased().roffEscaped) 1 \"\" \"\(name) \(version)\" \"User Commands\"\n.nh\n.ad l\n"
        s += ".SH NAME\n\(name.roffEscaped) \\- \(lowercasedFirst(c.abstract).roffEscaped)\n"
        s += ".SH SYNOPSIS\n.B \(name.roffEscaped)\n.RI [ options ] \" \" command \" \" [ arguments ]\n"
        s += ".SH DESCRIPTION\n" + paragraphs(c.abstract + (c.discussion.map { "\n" + $0 } ?? ""))
        s += ".SH GLOBAL OPTIONS\n"
        for o in c.options + BuiltinOptions.rootOnly + [BuiltinOptions.help] { s += option(o) }
        s += ".SH COMMANDS\n"
        for node in CommandNode.all(root) where !node.isRoot && node.config.subcommands.isEmpty {
            s += command(node)
        }
        for (title, text) in extraSections(name) { s += ".SH \(title)\n" + paragraphs(text) }
        return s
    }

    /// One command: its usage line, what it does, its arguments and options.
    static func command(_ node: CommandNode) -> String {
        let c = node.config
        var s = ".SS \"\(node.path.dropFirst().joined(separator: " ").roffEscaped)\"\n"
        let usage = HelpFormatter.wrapWords(HelpFormatter.usageParts(node.command, path: node.path), width: 72, indent: 4)
        s += ".PP\n.nf\n\(usage.split(separator: "\n").map { String($0).roffEscaped }.joined(separator: "\n"))\n.fi\n"
        s += paragraphs(c.abstract + (c.discussion.map { "\n" + $0 } ?? ""))
        for a in c.arguments { s += ".TP\n.I \(a.name.roffEscaped)\n\(a.help.roffEscaped)\n" }
        for o in c.options { s += option(o) }
        return s
    }

    /// `.TP` with the option's names in bold, its value in italics, then its help.
    static func option(_ o: OptionSpec) -> String {
        var names = (o.short.map { "\\fB\\-\($0)\\fR, " } ?? "") + "\\fB\\-\\-\(o.long.roffEscaped)\\fR"
        if let v = o.valueName { names += " \\fI\(v.roffEscaped)\\fR" }
        return ".TP\n\(names)\n\(o.help.roffEscaped)\n"
    }

    /// Each line of `text` as a paragraph.
    static func paragraphs(_ text: String) -> String {
        text.split(separator: "\n").map { ".PP\n" + String($0).roffEscaped + "\n" }.joined()
    }

    static func lowercasedFirst(_ s: String) -> String {
        guard let first = s.first else { return s }
        return first.lowercased() + s.dropFirst()
    }

    /// Sections beyond the commands: exit status for both programs, environment for felica.
    static func extraSections(_ name: String) -> [(String, String)] {
        let felica = name == FelicaRoot.configuration.name
        var sections = [("EXIT STATUS", felica ? """
            0 success; 1 failure, including a partial reading: a reading that lacks what the command is for \
            (a balance that could not be read; for history and log add, a history that could not be read or a \
            record that did not decode) prints what it has, says what it lacks on stderr and exits 1, while a card \
            that simply has none of it (no purse, an Octopus's history) exits 0 with a note; an export or total \
            that lacks records exits 1 unless --allow-incomplete; 64 usage error (a wrong option, argument or device \
            string, an empty path, an argument that is not UTF-8, an output that is also an input); 69 no reader or \
            no card; 130 interrupted (Ctrl-C; SIGTERM: 143), by the signal, for every command.
            """ : """
            0 success (an emulator stopped by SIGINT or SIGTERM, with a "stopped" line on stderr); 1 failure \
            (a --link path that exists and is not a link an emulator left behind included); 64 usage error (a \
            wrong option or argument); \
            69 vpcd: no vpcd to connect to (pcscd with vsmartcard-vpcd is not running). rcs380 and rcs956 exit \
            with the status of the command they run, and 127 when it is not found ("command not found").
            """)]
        if name == FelicaRoot.configuration.name {
            sections.append(("ENVIRONMENT", """
                FELICA_DEVICE: the device to use when --device is not given.
                FELICA_PCSC_DIALECT: the PC/SC dialect to use when neither --dialect nor ?dialect= says.
                COLUMNS: the width help is wrapped to (default: the terminal's, 80 when not a terminal).
                NO_COLOR: when set, no colour even on a terminal.
                """))
        }
        let other = name == FelicaRoot.configuration.name ? "felica-sim(1) for the stand-ins" : "felica(1) for reading cards"
        sections.append(("SEE ALSO", "\(other); the README and the guides installed in \(PackagedFiles.documentation) (README.md, Docs/)."))
        return sections
    }
}

extension String {
    /// Text safe in a roff line: backslashes and dashes escaped, a leading `.` or `'`
    /// neutralised so it is not taken for a request.
    var roffEscaped: String {
        var out = ""
        for ch in self {
            switch ch {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            default: out.append(ch)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}
