import FeliCaDevices
/// The result of looking at a command line: run a command, or show help/version, or
/// print a generated file (completion script, man page).
enum ParseOutcome {
    case run(any CLICommand.Type, ParsedArguments, path: [String])
    case help(any CLICommand.Type, path: [String])
    case version
    case completion(Shell)
    case manual
}

/// Splits a command line among nested commands and parses the leaf's options.
///
/// The root's own options (`--verbose`) are global: they are accepted before the command
/// and among any command's options. A value option never takes a word that is itself an
/// option (`--service --device x` is a missing value, not the service `--device`); a value
/// that starts with `-` is given as `--name=value`.
struct ArgumentParser {
    let root: any CLICommand.Type
    let version: String

    var globals: [OptionSpec] { root.configuration.options }

    func parse(_ args: [String]) throws(UsageErrorAt) -> ParseOutcome {
        var command = root
        var path = [root.configuration.name]
        var parsed = ParsedArguments()
        var i = 0
        // Walk down subcommands (`felica trace show ...`), taking global options on the way.
        while i < args.count {
            let word = args[i]
            let subs = command.configuration.subcommands
            if subs.isEmpty { break }
            let isRoot = path.count == 1
            if word == "-h" || word == "--help" { return .help(command, path: path) }
            if isRoot && word == "--version" { return .version }
            if isRoot && (word == "--" + BuiltinOptions.completion.long || word.hasPrefix("--" + BuiltinOptions.completion.long + "=")) {
                return try generator(args, at: i, command, path)
            }
            if isRoot && word == "--" + BuiltinOptions.manual.long {
                guard i + 1 == args.count else {
                    throw UsageErrorAt(UsageError("unexpected argument '\(args[i + 1])'"), command, path)
                }
                return .manual
            }
            if Self.looksLikeOption(word) {
                let at = i
                if let error = readGlobal(args, &i, root: isRoot, into: &parsed) {
                    throw UsageErrorAt(misplaced(args, at: at, under: command, path: path) ?? error, command, path)
                }
                continue
            }
            if word == "help" {
                return try helpTarget(Array(args[(i + 1)...]), from: command, path: path).get()
            }
            guard let next = subs.first(where: { $0.configuration.name == word }) else {
                let names = subs.map { $0.configuration.name }
                // `felica version` is `felica --version`: a root option written as a command.
                let rootOption = isRoot && (word == "version" || root.configuration.options.contains { $0.long == word })
                let hint = rootOption ? "; did you mean '--\(word)'?" : Suggestion.didYouMean(word, names)
                throw UsageErrorAt(UsageError("unknown command '\(word)'" + hint), command, path)
            }
            command = next
            path.append(word)
            i += 1
        }
        let rest = Array(args[i...])
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .help(command, path: path)
        }
        let config = command.configuration
        if !config.subcommands.isEmpty {
            return .help(command, path: path)
        }
        do {
            let node = CommandNode(path: path, command: command)
            var out = try parseOptions(rest, config, readable: node.readable(root: root), into: parsed)
            out.declared = Set(node.readable(root: root).map(\.long))
            return .run(command, out, path: path)
        } catch {
            throw UsageErrorAt(error, command, path)
        }
    }

    /// An option of a command written before the command's name (`felica --json balance`):
    /// the error saying options follow the command, with the line as it should be; nil
    /// when no command below `command` takes the option.
    func misplaced(_ args: [String], at i: Int, under command: any CLICommand.Type, path: [String]) -> UsageError? {
        let word = args[i]
        let long = word.hasPrefix("--") ? String(word.dropFirst(2).prefix { $0 != "=" }) : nil
        let short = word.hasPrefix("--") || word.count != 2 ? nil : word.last
        func takes(_ c: any CLICommand.Type) -> Bool {
            c.configuration.options.contains { (long != nil && $0.long == long) || (short != nil && $0.short == short) }
        }
        let nodes = CommandNode.all(command).filter { $0.config.subcommands.isEmpty && takes($0.command) }
        guard !nodes.isEmpty else { return nil }
        // The command named later on the line, if it takes the option: show the line fixed.
        let spec = nodes[0].config.options.first { (long != nil && $0.long == long) || (short != nil && $0.short == short) }
        let taken = spec?.valueName != nil && !word.contains("=") && i + 1 < args.count ? 2 : 1
        let option = Array(args[i..<(i + taken)])
        // Where each command that takes it is named later on the line (the first place).
        let rest = Array(args[(i + taken)...])
        func position(_ sub: [String]) -> Int? {
            guard !sub.isEmpty, sub.count <= rest.count else { return nil }
            return (0...(rest.count - sub.count)).first { Array(rest[$0..<($0 + sub.count)]) == sub }
        }
        let named = nodes.compactMap { n in position(Array(n.path.dropFirst())).map { (n, $0) } }
            .max { $0.0.path.count < $1.0.path.count }
        guard let (node, at) = named else {
            let names = nodes.prefix(3).map { $0.path.dropFirst().joined(separator: " ") }.joined(separator: ", ")
            return UsageError("option '\(word)' belongs to a command (\(names)\(nodes.count > 3 ? ", ..." : "")): options follow the command's name")
        }
        let end = at + node.path.count - 1
        let fixed = path + Array(rest[..<end]) + option + Array(rest[end...])
        return UsageError("option '\(word)' belongs to '\(node.path.joined(separator: " "))': options follow the command's name, as in '\(fixed.joined(separator: " "))'")
    }

    /// A global option before the command; the error, if any.
    func readGlobal(_ args: [String], _ i: inout Int, root: Bool, into parsed: inout ParsedArguments) -> UsageError? {
        readGlobalLike(args, &i, specs: globals, extraNames: root ? rootOnlyNames : ["help"], into: &parsed)
    }

    /// ``readOption(_:_:specs:extraNames:into:)`` returning its error.
    func readGlobalLike(_ args: [String], _ i: inout Int, specs: [OptionSpec], extraNames: [String] = [], into parsed: inout ParsedArguments) -> UsageError? {
        do {
            try readOption(args, &i, specs: specs, extraNames: extraNames, into: &parsed)
            return nil
        } catch {
            return error
        }
    }

    /// Options only the root takes, for suggestions.
    var rootOnlyNames: [String] { (BuiltinOptions.rootOnly + [BuiltinOptions.help]).map(\.long) }

    /// `--generate-completion-script bash|zsh|fish` (or `=bash`), alone on the line.
    func generator(_ args: [String], at i: Int, _ command: any CLICommand.Type, _ path: [String]) throws(UsageErrorAt) -> ParseOutcome {
        var parsed = ParsedArguments()
        var j = i
        if let error = readGlobalLike(args, &j, specs: [BuiltinOptions.completion], into: &parsed) {
            throw UsageErrorAt(error, command, path)
        }
        guard j == args.count else { throw UsageErrorAt(UsageError("unexpected argument '\(args[j])'"), command, path) }
        // The parser has checked the value against the choices.
        return .completion(Shell(rawValue: parsed.values[BuiltinOptions.completion.long]?.last ?? "") ?? .bash)
    }

    /// `felica help [<command> ...]`: whose help to show.
    func helpTarget(_ words: [String], from start: any CLICommand.Type, path: [String]) -> Result<ParseOutcome, UsageErrorAt> {
        var target = start
        var tpath = path
        for word in words {
            if word == "help" && ObjectIdentifier(target) == ObjectIdentifier(start) {
                return .success(.help(HelpCommand.self, path: path + ["help"]))
            }
            let subs = target.configuration.subcommands
            guard let next = subs.first(where: { $0.configuration.name == word }) else {
                let message = subs.isEmpty
                    ? "'\(tpath.joined(separator: " "))' has no subcommands; unexpected '\(word)'"
                    : "unknown command '\(word)'" + Suggestion.didYouMean(word, subs.map { $0.configuration.name })
                return .failure(UsageErrorAt(UsageError(message), HelpCommand.self, path + ["help"]))
            }
            target = next
            tpath.append(word)
        }
        return .success(.help(target, path: tpath))
    }

    func parseOptions(_ args: [String], _ config: CommandConfiguration, readable specs: [OptionSpec],
                      into start: ParsedArguments) throws(UsageError) -> ParsedArguments {
        var out = start
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            if onlyPositionals || !Self.looksLikeOption(a) {
                if a == "--" && !onlyPositionals { onlyPositionals = true; i += 1; continue }
                out.positionals.append(a)
                i += 1
                continue
            }
            try readOption(args, &i, specs: specs, extraNames: ["help"], into: &out)
        }
        let needed = config.arguments.filter { !$0.optional }.count
        if out.positionals.count < needed {
            throw UsageError("missing argument <\(config.arguments[out.positionals.count].name)>")
        }
        if out.positionals.count > config.arguments.count && config.arguments.last?.repeatable != true {
            throw UsageError("unexpected argument '\(out.positionals[config.arguments.count])'")
        }
        for r in config.options.map(\.long) where config.required.contains(r) && out.values[r] == nil {
            throw UsageError("missing required option '--\(r)'")
        }
        return out
    }

    /// Reads the option at `args[i]` (and its value), advancing `i`.
    func readOption(_ args: [String], _ i: inout Int, specs: [OptionSpec], extraNames: [String], into out: inout ParsedArguments) throws(UsageError) {
        let a = args[i]
        i += 1
        var inline: String? = nil
        let spec: OptionSpec
        if a.hasPrefix("--") {
            var name = String(a.dropFirst(2))
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let s = specs.first(where: { $0.long == name }) else {
                let names = (specs.map(\.long) + extraNames).map { "--" + $0 }
                throw UsageError("unknown option '--\(name)'" + Suggestion.didYouMean("--" + name, names))
            }
            spec = s
        } else {
            guard a.count == 2, let s = specs.first(where: { $0.short == a.last }) else {
                let names = specs.compactMap { $0.short.map { "-\($0)" } } + specs.map { "--" + $0.long }
                throw UsageError("unknown option '\(a)'" + Suggestion.didYouMean(a, names))
            }
            spec = s
        }
        let name = spec.long
        if spec.isFlag {
            if inline != nil { throw UsageError("option '--\(name)' takes no value") }
            out.flags.insert(name)
            return
        }
        let value: String
        if let inline {
            value = inline
        } else {
            guard i < args.count, !Self.looksLikeOption(args[i]), args[i] != "--" else {
                throw UsageError("option '--\(name)' needs a value <\(spec.valueName!)>"
                    + (i < args.count ? " (got the option '\(args[i])'; write --\(name)=\(args[i]) if that is the value)" : ""))
            }
            value = args[i]
            i += 1
        }
        let choices = spec.kind.names
        if value.isEmpty, [.file, .directory, .nameOrFile].contains(spec.kind.form) {
            throw UsageError("option '--\(name)' needs a \(spec.kind.form == .directory ? "directory" : "file") path, got an empty one")
        }
        if spec.kind.form == .choice, !choices.contains(value) {
            throw UsageError("option '--\(name)': '\(value)' is not one of \(choices.joined(separator: ", "))" + Suggestion.didYouMean(value, choices))
        }
        if !spec.repeatable && out.values[name] != nil {
            throw UsageError("option '--\(name)' given more than once")
        }
        out.values[name, default: []].append(value)
    }

    /// `--name`, `--name=value` or `-x`; not `-` (stdin), `--` or a negative number.
    static func looksLikeOption(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1, word != "--" else { return false }
        let second = word[word.index(after: word.startIndex)]
        return second == "-" || second.isLetter
    }
}

/// A usage error and the command it belongs to (for the usage line).
struct UsageErrorAt: Error {
    let error: UsageError
    let command: any CLICommand.Type
    let path: [String]
    init(_ error: UsageError, _ command: any CLICommand.Type, _ path: [String]) {
        self.error = error
        self.command = command
        self.path = path
    }
}

/// `felica help`: only its help is ever shown; the parser routes `help <command>` itself.
struct HelpCommand: CLICommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            name: "help",
            abstract: "Show subcommand help information.",
            arguments: [ArgumentSpec("subcommands", help: "The command to explain, as typed after the program's name.", optional: true, repeatable: true)])
    }
}
