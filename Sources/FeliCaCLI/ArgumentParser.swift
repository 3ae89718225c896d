/// An option a command accepts.
public struct OptionSpec: Sendable {
    public var long: String
    public var short: Character?
    /// Placeholder for the value (`<hex>`); nil for a flag.
    public var valueName: String?
    public var help: String
    /// May be given several times (values accumulate).
    public var repeatable: Bool

    public init(_ long: String, short: Character? = nil, value: String? = nil, help: String, repeatable: Bool = false) {
        self.long = long
        self.short = short
        self.valueName = value
        self.help = help
        self.repeatable = repeatable
    }

    public static func flag(_ long: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(long, short: short, help: help)
    }

    var isFlag: Bool { valueName == nil }

    var label: String {
        let names = (short.map { "-\($0), " } ?? "") + "--" + long
        return valueName.map { "\(names) <\($0)>" } ?? names
    }

    var usage: String { valueName.map { "--\(long) <\($0)>" } ?? "--\(long)" }
}

/// A positional argument.
public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional: Bool
    /// Takes every remaining word (the last argument only), e.g. a command to run after `--`.
    public var variadic: Bool
    public init(_ name: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
    }
}

/// What a command is called, says about itself and accepts.
public struct CommandConfiguration: Sendable {
    public var name: String
    public var abstract: String
    public var discussion: String?
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    /// Required options (shown without brackets in the usage line).
    public var required: Set<String>
    public var subcommands: [any CLICommand.Type]

    public init(name: String, abstract: String, discussion: String? = nil, arguments: [ArgumentSpec] = [],
                options: [OptionSpec] = [], required: Set<String> = [], subcommands: [any CLICommand.Type] = []) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.required = required
        self.subcommands = subcommands
    }
}

/// A usage error: wrong options or arguments (exit 64).
public struct UsageError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The options and arguments given to one command.
public struct ParsedArguments: Sendable {
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var positionals: [String] = []

    public func flag(_ long: String) -> Bool { flags.contains(long) }
    public func value(_ long: String) -> String? { values[long]?.last }
    public func all(_ long: String) -> [String] { values[long] ?? [] }

    /// A required option's value.
    public func required(_ long: String) throws(UsageError) -> String {
        guard let v = value(long) else { throw UsageError("missing required option '--\(long)'") }
        return v
    }

    /// An integer option in `range`.
    public func int(_ long: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let s = value(long) else { return nil }
        guard let v = Int(s), range.contains(v) else {
            throw UsageError("option '--\(long)': \"\(s)\" is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }
}

/// The result of looking at a command line: run a command, or show help/version.
enum ParseOutcome {
    case run(any CLICommand.Type, ParsedArguments, path: [String])
    case help(any CLICommand.Type, path: [String])
    case version
}

/// Splits a command line among nested commands and parses the leaf's options.
struct ArgumentParser {
    let root: any CLICommand.Type
    let version: String

    func parse(_ args: [String]) throws(UsageErrorAt) -> ParseOutcome {
        var command = root
        var path = [root.configuration.name]
        var rest = args[...]
        // Walk down subcommands (`felica trace show ...`, `felica help poll`).
        while let first = rest.first {
            let subs = command.configuration.subcommands
            if first == "help" && !subs.isEmpty {
                rest = rest.dropFirst()
                var target = command
                var tpath = path
                for word in rest {
                    guard let next = target.configuration.subcommands.first(where: { $0.configuration.name == word }) else {
                        throw UsageErrorAt(UsageError("unknown command '\(word)'"), target, tpath)
                    }
                    target = next
                    tpath.append(word)
                }
                return .help(target, path: tpath)
            }
            if first == "--version" && ObjectIdentifier(command) == ObjectIdentifier(root) { return .version }
            guard let next = subs.first(where: { $0.configuration.name == first }) else { break }
            command = next
            path.append(first)
            rest = rest.dropFirst()
        }
        let config = command.configuration
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) {
            return .help(command, path: path)
        }
        if !config.subcommands.isEmpty {
            if let first = rest.first {
                throw UsageErrorAt(UsageError("unknown command '\(first)'"), command, path)
            }
            return .help(command, path: path)
        }
        do {
            let parsed = try parseOptions(Array(rest), config)
            return .run(command, parsed, path: path)
        } catch {
            throw UsageErrorAt(error, command, path)
        }
    }

    func parseOptions(_ args: [String], _ config: CommandConfiguration) throws(UsageError) -> ParsedArguments {
        var out = ParsedArguments()
        var i = 0
        var onlyPositionals = false
        func find(_ name: String) -> OptionSpec? { config.options.first { $0.long == name } }
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals || a == "-" || !a.hasPrefix("-") {
                out.positionals.append(a)
                continue
            }
            if a == "--" { onlyPositionals = true; continue }
            var name: String
            var inline: String? = nil
            if a.hasPrefix("--") {
                name = String(a.dropFirst(2))
                if let eq = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: eq)...])
                    name = String(name[..<eq])
                }
            } else {
                guard a.count == 2, let spec = config.options.first(where: { $0.short == a.last }) else {
                    throw UsageError("unknown option '\(a)'")
                }
                name = spec.long
            }
            guard let spec = find(name) else { throw UsageError("unknown option '--\(name)'") }
            if spec.isFlag {
                if inline != nil { throw UsageError("option '--\(name)' takes no value") }
                out.flags.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard i < args.count else { throw UsageError("option '--\(name)' needs a value <\(spec.valueName!)>") }
                value = args[i]
                i += 1
            }
            if !spec.repeatable && out.values[name] != nil {
                throw UsageError("option '--\(name)' given more than once")
            }
            out.values[name, default: []].append(value)
        }
        let needed = config.arguments.filter { !$0.optional }.count
        if out.positionals.count < needed {
            throw UsageError("missing argument <\(config.arguments[out.positionals.count].name)>")
        }
        if out.positionals.count > config.arguments.count && config.arguments.last?.variadic != true {
            throw UsageError("unexpected argument '\(out.positionals[config.arguments.count])'")
        }
        for r in config.required.sorted() where out.values[r] == nil {
            throw UsageError("missing required option '--\(r)'")
        }
        return out
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

/// Help text in the swift-argument-parser layout.
enum HelpFormatter {
    static func usage(_ command: any CLICommand.Type, path: [String]) -> String {
        let c = command.configuration
        var parts = [path.joined(separator: " ")]
        if !c.subcommands.isEmpty {
            parts.append("<subcommand>")
        } else {
            for o in c.options where o.long != "help" {
                parts.append(c.required.contains(o.long) ? o.usage : "[\(o.usage)]")
            }
            for a in c.arguments {
                let word = a.variadic ? "<\(a.name)> ..." : "<\(a.name)>"
                parts.append(a.optional ? "[\(word)]" : word)
            }
        }
        return parts.joined(separator: " ")
    }

    static func help(_ command: any CLICommand.Type, path: [String]) -> String {
        let c = command.configuration
        var out = "OVERVIEW: \(c.abstract)\n"
        if let d = c.discussion { out += "\n" + d + "\n" }
        out += "\nUSAGE: \(usage(command, path: path))\n"
        var rows: [(String, String)] = []
        if !c.arguments.isEmpty {
            rows = c.arguments.map { ("<\($0.name)>", $0.help) }
            out += "\nARGUMENTS:\n" + table(rows)
        }
        var opts = c.options.map { ($0.label, $0.help) }
        if path.count == 1 && !c.subcommands.isEmpty { opts.append(("--version", "Show the version.")) }
        opts.append(("-h, --help", "Show help information."))
        out += "\nOPTIONS:\n" + table(opts)
        if !c.subcommands.isEmpty {
            out += "\nSUBCOMMANDS:\n" + table(c.subcommands.map { ($0.configuration.name, $0.configuration.abstract) })
            out += "\n  See '\(path.joined(separator: " ")) help <subcommand>' for detailed help.\n"
        }
        return out
    }

    static func table(_ rows: [(String, String)]) -> String {
        let width = min(max(rows.map(\.0.count).max() ?? 0, 10) + 2, 30)
        var out = ""
        for (label, help) in rows {
            if label.count + 2 > width {
                out += "  \(label)\n" + String(repeating: " ", count: width + 2) + help + "\n"
            } else {
                out += "  " + label + String(repeating: " ", count: width - label.count) + help + "\n"
            }
        }
        return out
    }
}
