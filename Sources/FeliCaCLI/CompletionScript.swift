
/// A shell `--generate-completion-script` writes for.
enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish

    static var names: [String] { allCases.map(\.rawValue) }
}

/// One command of a tree, with the words that reach it (`["felica", "trace", "show"]`).
struct CommandNode {
    let path: [String]
    let command: any CLICommand.Type
    var config: CommandConfiguration { command.configuration }
    var isRoot: Bool { path.count == 1 }
    /// `felica/trace/show`: the key completion scripts match on.
    var key: String { path.joined(separator: "/") }

    /// Every command under `root` in help order, `help` last among the root's.
    static func all(_ root: any CLICommand.Type) -> [CommandNode] {
        var out: [CommandNode] = []
        func visit(_ c: any CLICommand.Type, _ path: [String]) {
            out.append(CommandNode(path: path, command: c))
            for sub in c.configuration.subcommands { visit(sub, path + [sub.configuration.name]) }
        }
        visit(root, [root.configuration.name])
        out.append(CommandNode(path: [root.configuration.name, HelpCommand.configuration.name], command: HelpCommand.self))
        return out
    }

    /// The subcommands offered after this command (`help` offers the root's).
    func subcommands(root: any CLICommand.Type) -> [(name: String, abstract: String)] {
        var subs = config.subcommands.map { ($0.configuration.name, $0.configuration.abstract) }
        if isRoot { subs.append((HelpCommand.configuration.name, HelpCommand.configuration.abstract)) }
        if ObjectIdentifier(command) == ObjectIdentifier(HelpCommand.self) { subs = root.configuration.subcommands.map { ($0.configuration.name, $0.configuration.abstract) } }
        return subs.map { (name: $0.0, abstract: $0.1) }
    }

    /// The options the command itself reads: its own, then the root's global ones it does
    /// not declare itself. The parser reads these, and nothing else may be read.
    func readable(root: any CLICommand.Type) -> [OptionSpec] {
        var specs = config.options
        for g in root.configuration.options where !specs.contains(where: { $0.long == g.long }) { specs.append(g) }
        return specs
    }

    /// Every option this command accepts — what it reads, help, and at the root the version
    /// and generators: the one list the parser, help and completion scripts all show.
    func options(root: any CLICommand.Type) -> [OptionSpec] {
        readable(root: root) + (isRoot ? BuiltinOptions.rootOnly : []) + [BuiltinOptions.help]
    }

    /// Whether words after the options are files.
    var takesFiles: Bool {
        config.arguments.contains { $0.kind.form == .file || $0.kind.form == .directory }
    }
}

/// Options the parser itself handles.
enum BuiltinOptions {
    static let help = OptionSpec.flag("help", short: "h", help: "Show help information.")
    static let version = OptionSpec.flag("version", help: "Show the version.")
    static let completion = OptionSpec(
        "generate-completion-script", value: "shell", help: "Print a completion script for \(Shell.names.joined(separator: ", ")).",
        kind: .choice(Shell.names))
    static let manual = OptionSpec.flag("generate-manual", help: "Print the man page (roff) on stdout, to save as a .1 file.")
    static let rootOnly = [version, completion, manual]
}

/// Completion scripts for bash, zsh and fish, generated from the option model: command
/// names, option names, allowed values, and file names where an option takes a file.
enum CompletionScript {
    static func script(for root: any CLICommand.Type, shell: Shell) -> String {
        let nodes = CommandNode.all(root)
        switch shell {
        case .bash: return bash(root, nodes)
        case .zsh: return zsh(root, nodes)
        case .fish: return fish(root, nodes)
        }
    }

    /// The shell-safe function name for a program (`felica-sim` → `felica_sim`).
    static func function(_ root: any CLICommand.Type) -> String {
        "_" + root.configuration.name.replacingDashes
    }

    /// Case patterns (`"felica:trace"`) for each word that moves to a subcommand.
    static func commandPatterns(_ nodes: [CommandNode]) -> [(pattern: String, key: String)] {
        nodes.filter { !$0.isRoot }.map { n in
            ("\(n.path.dropLast().joined(separator: "/")):\(n.path.last!)", n.key)
        }
    }

    /// `key:--name` and `key:-x` for every option that takes a value.
    static func valuePatterns(_ nodes: [CommandNode], _ root: any CLICommand.Type) -> [(patterns: [String], spec: OptionSpec, key: String)] {
        nodes.flatMap { n in
            n.options(root: root).filter { !$0.isFlag }.map { o in
                ([n.key + ":--" + o.long] + (o.short.map { [n.key + ":-\($0)"] } ?? []), o, n.key)
            }
        }
    }

    // MARK: - bash

    static func bash(_ root: any CLICommand.Type, _ nodes: [CommandNode]) -> String {
        let name = root.configuration.name
        let fn = function(root)
        var s = """
            # bash completion for \(name), generated by `\(name) --generate-completion-script bash`.
            \(fn)() {
                # Split the line on blanks only, so values like virtual:suica stay one word.
                local line="${COMP_LINE:0:COMP_POINT}"
                local -a words
                read -ra words <<< "$line"
                [[ "$line" == *[[:blank:]] || ${#words[@]} -eq 0 ]] && words+=("")
                local cur="${words[${#words[@]}-1]}" prev="" path="\(name)" skip=0 i w
                ((${#words[@]} > 1)) && prev="${words[${#words[@]}-2]}"
                for ((i = 1; i < ${#words[@]} - 1; i++)); do
                    w="${words[i]}"
                    if ((skip)); then skip=0; continue; fi
                    case "$path:$w" in

            """
        for (pattern, key) in commandPatterns(nodes) {
            s += "            \(bashQuote(pattern))) path=\(bashQuote(key)) ;;\n"
        }
        let values = valuePatterns(nodes, root)
        if !values.isEmpty {
            s += "            " + values.flatMap(\.patterns).map(bashQuote).joined(separator: "|") + ") skip=1 ;;\n"
        }
        s += """
                    esac
                done
                local -a reply=()
                case "$path:$prev" in

            """
        for v in values {
            s += "        " + v.patterns.map(bashQuote).joined(separator: "|") + ") "
            let names = v.spec.kind.names
            switch v.spec.kind.form {
            case .file: s += "compopt -o filenames 2>/dev/null; mapfile -t reply < <(compgen -f -- \"$cur\")"
            case .directory: s += "compopt -o filenames 2>/dev/null; mapfile -t reply < <(compgen -d -- \"$cur\")"
            case .nameOrFile:
                s += "compopt -o filenames 2>/dev/null; mapfile -t reply < <(compgen -W \(bashQuote(names.joined(separator: " "))) -- \"$cur\"; compgen -f -- \"$cur\")"
            case .choice, .suggested:
                s += "mapfile -t reply < <(compgen -W \(bashQuote(names.joined(separator: " "))) -- \"$cur\")"
            case .text: s += ":"
            }
            s += " ;;\n"
        }
        s += """
                    *)
                        local opts="" subs="" files=0
                        case "$path" in

            """
        for n in nodes {
            let opts = n.options(root: root).flatMap { o in (o.short.map { ["-\($0)"] } ?? []) + ["--" + o.long] }
            let subs = n.subcommands(root: root).map(\.name)
            s += "                \(bashQuote(n.key))) opts=\(bashQuote(opts.joined(separator: " "))); subs=\(bashQuote(subs.joined(separator: " "))); files=\(n.takesFiles ? 1 : 0) ;;\n"
        }
        s += """
                        esac
                        if [[ "$cur" == -* ]]; then
                            mapfile -t reply < <(compgen -W "$opts" -- "$cur")
                        elif [[ -n "$subs" ]]; then
                            mapfile -t reply < <(compgen -W "$subs" -- "$cur")
                        elif ((files)); then
                            compopt -o filenames 2>/dev/null
                            mapfile -t reply < <(compgen -f -- "$cur")
                        fi ;;
                esac
                # bash replaces only the part of the word after the last ':'.
                if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
                    local colon="${cur%"${cur##*:}"}"
                    reply=("${reply[@]#"$colon"}")
                fi
                COMPREPLY=("${reply[@]}")
            }
            complete -F \(fn) \(name)

            """
        return s
    }

    static func bashQuote(_ s: String) -> String { "'" + s.escapingScalars { $0 == "'" ? "'\\''" : nil } + "'" }

    // MARK: - zsh

    static func zsh(_ root: any CLICommand.Type, _ nodes: [CommandNode]) -> String {
        let name = root.configuration.name
        let fn = function(root)
        var s = """
            #compdef \(name)
            # zsh completion for \(name), generated by `\(name) --generate-completion-script zsh`.
            \(fn)() {
                local path_="\(name)" w i skip=0
                for ((i = 2; i < CURRENT; i++)); do
                    w="${words[i]}"
                    if ((skip)); then skip=0; continue; fi
                    case "$path_:$w" in

            """
        for (pattern, key) in commandPatterns(nodes) {
            s += "            \(bashQuote(pattern))) path_=\(bashQuote(key)) ;;\n"
        }
        let values = valuePatterns(nodes, root)
        if !values.isEmpty {
            s += "            " + values.flatMap(\.patterns).map(bashQuote).joined(separator: "|") + ") skip=1 ;;\n"
        }
        s += """
                    esac
                done
                local prev="${words[CURRENT-1]}" cur="${words[CURRENT]}"
                case "$path_:$prev" in

            """
        for v in values {
            s += "        " + v.patterns.map(bashQuote).joined(separator: "|") + ") "
            let names = v.spec.kind.names
            switch v.spec.kind.form {
            case .file: s += "_files"
            case .directory: s += "_files -/"
            case .nameOrFile: s += "compadd -- \(names.map(bashQuote).joined(separator: " ")); _files"
            case .choice, .suggested: s += "compadd -- \(names.map(bashQuote).joined(separator: " "))"
            case .text: s += "_message \(bashQuote(v.spec.valueName ?? "value"))"
            }
            s += "; return ;;\n"
        }
        s += """
                esac
                local -a opts subs
                local files=0
                case "$path_" in

            """
        for n in nodes {
            let opts = n.options(root: root).flatMap { o in
                ((o.short.map { ["-\($0)"] } ?? []) + ["--" + o.long]).map { zshEntry($0, o.help) }
            }
            let subs = n.subcommands(root: root).map { zshEntry($0.name, $0.abstract) }
            s += "        \(bashQuote(n.key)))\n"
            s += "            opts=(\(opts.joined(separator: " ")))\n"
            s += "            subs=(\(subs.joined(separator: " ")))\n"
            s += "            files=\(n.takesFiles ? 1 : 0) ;;\n"
        }
        s += """
                esac
                if [[ "$cur" == -* ]]; then
                    _describe -t options option opts
                elif (( ${#subs} )); then
                    _describe -t commands command subs
                elif (( files )); then
                    _files
                fi
            }
            if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then
                \(fn) "$@"
            else
                compdef \(fn) \(name)
            fi

            """
        return s
    }

    /// `'name:description'` for `_describe` (a colon in the name is escaped).
    static func zshEntry(_ name: String, _ help: String) -> String {
        bashQuote(name.escapingScalars { $0 == ":" ? "\\:" : nil } + ":" + firstSentence(help))
    }

    // MARK: - fish

    static func fish(_ root: any CLICommand.Type, _ nodes: [CommandNode]) -> String {
        let name = root.configuration.name
        let fn = "__" + name.replacingDashes + "_path"
        var s = """
            # fish completion for \(name), generated by `\(name) --generate-completion-script fish`.
            function \(fn) --description 'The \(name) command being typed, as program/command/subcommand'
                set -l path \(name)
                set -l skip 0
                for w in (commandline -opc)[2..-1]
                    if test $skip = 1
                        set skip 0
                        continue
                    end
                    switch "$path:$w"

            """
        for (pattern, key) in commandPatterns(nodes) {
            s += "            case \(fishQuote(pattern))\n                set path \(fishQuote(key))\n"
        }
        let values = valuePatterns(nodes, root)
        if !values.isEmpty {
            s += "            case " + values.flatMap(\.patterns).map(fishQuote).joined(separator: " ") + "\n                set skip 1\n"
        }
        s += """
                    end
                end
                echo $path
            end
            complete -c \(name) -f

            """
        for n in nodes {
            let when = "-n " + fishQuote("test (\(fn)) = \(n.key)")
            for sub in n.subcommands(root: root) {
                s += "complete -c \(name) \(when) -a \(fishQuote(sub.name)) -d \(fishQuote(firstSentence(sub.abstract)))\n"
            }
            for o in n.options(root: root) {
                var line = "complete -c \(name) \(when) -l \(o.long)"
                if let short = o.short { line += " -s \(short)" }
                if !o.isFlag {
                    line += " -r"
                    let names = o.kind.names
                    switch o.kind.form {
                    case .file, .directory: line += " -F"
                    case .nameOrFile: line += " -F -a " + fishQuote(names.joined(separator: " "))
                    case .choice, .suggested: line += " -f -a " + fishQuote(names.joined(separator: " "))
                    case .text: line += " -f"
                    }
                }
                s += line + " -d " + fishQuote(firstSentence(o.help)) + "\n"
            }
            if n.takesFiles { s += "complete -c \(name) \(when) -F\n" }
        }
        return s
    }

    static func fishQuote(_ s: String) -> String {
        "'" + s.escapingScalars { $0 == "\\" || $0 == "'" ? "\\" + String($0) : nil } + "'"
    }

    /// Up to the first ". " (a whole help text is too long for a completion menu).
    static func firstSentence(_ help: String) -> String {
        guard let end = help.firstRange(of: ". ") else { return help }
        return String(help[..<end.lowerBound]) + "."
    }
}

extension String {
    /// `felica-sim` → `felica_sim`, for shell function names.
    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }

    /// The text with each scalar for which `replacement` gives a string replaced by it: a
    /// quote is found even where a combining mark follows it (a `Character`-wise search
    /// would see one character there and miss it).
    func escapingScalars(_ replacement: (Unicode.Scalar) -> String?) -> String {
        var result = ""
        for scalar in unicodeScalars {
            if let r = replacement(scalar) { result += r } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}
