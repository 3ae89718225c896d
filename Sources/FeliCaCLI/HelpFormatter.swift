#if canImport(Glibc)
import Glibc
#endif

/// Help text in the swift-argument-parser layout (OVERVIEW, USAGE, ARGUMENTS, OPTIONS,
/// SUBCOMMANDS; descriptions from column 26), wrapped to the terminal width.
enum HelpFormatter {
    /// Where descriptions start, as in swift-argument-parser.
    static let labelColumn = 26

    /// `felica poll [--device <device>] ...` on one line.
    static func usage(_ command: any CLICommand.Type, path: [String]) -> String {
        usageParts(command, path: path).joined(separator: " ")
    }

    static func usageParts(_ command: any CLICommand.Type, path: [String]) -> [String] {
        let c = command.configuration
        var parts = [path.joined(separator: " ")]
        if !c.subcommands.isEmpty {
            parts.append("<subcommand>")
        } else {
            for o in c.options {
                parts.append(c.required.contains(o.long) ? o.usage : "[\(o.usage)]")
            }
            for a in c.arguments { parts.append(a.usage) }
        }
        return parts
    }

    /// The help of `command` (at `path` under `root`).
    static func help(_ command: any CLICommand.Type, path: [String], root: any CLICommand.Type,
                     width: Int = TerminalWidth.columns()) -> String {
        let c = command.configuration
        var out = wrap("OVERVIEW: \(c.abstract)", width: width, indent: 0) + "\n"
        if let d = c.discussion {
            out += "\n" + d.split(separator: "\n", omittingEmptySubsequences: false)
                .map { wrap(String($0), width: width, indent: 0) }.joined(separator: "\n") + "\n"
        }
        out += "\n" + wrapWords(["USAGE:"] + usageParts(command, path: path), width: width, indent: 7) + "\n"
        if !c.arguments.isEmpty {
            out += "\nARGUMENTS:\n" + table(c.arguments.map { ("<\($0.name)>", $0.help) }, width: width)
        }
        let accepted = CommandNode(path: path, command: command).options(root: root)
        out += "\nOPTIONS:\n" + table(accepted.map { ($0.label, $0.help) }, width: width)
        if !c.subcommands.isEmpty {
            var subs = c.subcommands.map { ($0.configuration.name, $0.configuration.abstract) }
            if path.count == 1 { subs.append((HelpCommand.configuration.name, HelpCommand.configuration.abstract)) }
            out += "\nSUBCOMMANDS:\n" + table(subs, width: width)
            out += "\n" + wrap("  See '\(path.joined(separator: " ")) help <subcommand>' for detailed help.", width: width, indent: 2) + "\n"
        }
        return out
    }

    /// Two-space indented labels; descriptions from ``labelColumn``, wrapped with a hanging
    /// indent; a label too long for the column puts its description on the next line.
    static func table(_ rows: [(String, String)], width: Int) -> String {
        var out = ""
        for (label, text) in rows {
            let padded = "  " + label
            let body = wrap(String(repeating: " ", count: labelColumn) + text, width: width, indent: labelColumn)
            if padded.count < labelColumn - 1 {
                out += padded + body.dropFirst(padded.count) + "\n"
            } else {
                out += padded + "\n" + body + "\n"
            }
        }
        return out
    }

    /// Word-wraps `text` to `width` columns; continuation lines start with `indent` spaces.
    /// The text's own leading spaces stay on the first line. A word longer than a line
    /// stands alone rather than being cut.
    static func wrap(_ text: String, width: Int, indent: Int) -> String {
        let lead = text.prefix(while: { $0 == " " })
        let words = text.dropFirst(lead.count).split(separator: " ").map(String.init)
        guard !words.isEmpty else { return String(lead) }
        var first = words
        first[0] = lead + first[0]
        return wrapWords(first, width: width, indent: indent)
    }

    /// Joins `words` with spaces into lines of at most `width` columns.
    static func wrapWords(_ words: [String], width: Int, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in words {
            if line.isEmpty {
                line = (lines.isEmpty ? "" : pad) + word
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = pad + word
            }
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}

/// How wide help may be: `COLUMNS` when set, else the terminal's width, else 80.
enum TerminalWidth {
    static func columns(environment: [String: String]? = nil) -> Int {
        let value = environment.map { $0["COLUMNS"] } ?? getenv("COLUMNS").map { String(cString: $0) }
        if let value, let n = Int(value), n > 0 { return max(n, 40) }
        var size = winsize()
        if isatty(1) != 0, ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return max(Int(size.ws_col), 40) }
        return 80
    }
}
