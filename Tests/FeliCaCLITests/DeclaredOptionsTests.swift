@testable import FeliCaCLI
import FeliCaSimCommands
import Testing

/// Every command reads only the options it declares: built from a command line the parser
/// resolved, with every option it declares given, no command reads one outside them.
@Suite struct DeclaredOptionsTests {
    /// Each leaf command of `felica` and `felica-sim`, with its root.
    static let commands: [CommandNode] = [FelicaRoot.self as any CLICommand.Type, FeliCaSimCommandLine.root].flatMap { root in
        CommandNode.all(root).filter { !$0.isRoot && $0.config.subcommands.isEmpty }
    }

    static func root(of node: CommandNode) -> any CLICommand.Type {
        node.path.first == "felica" ? FelicaRoot.self : FeliCaSimCommandLine.root
    }

    @Test func everyCommandIsCovered() {
        #expect(Self.commands.count >= 20)
        #expect(Self.commands.contains { $0.path == ["felica", "watch"] })
        #expect(Self.commands.contains { $0.path == ["felica-sim", "rcs380"] })
    }

    @Test(arguments: commands.map(\.path))
    func readsOnlyWhatItDeclares(_ path: [String]) throws {
        let node = try #require(Self.commands.first { $0.path == path })
        let readable = node.readable(root: Self.root(of: node))
        let log = UndeclaredReads()
        // Every declared option given, so that every read the command could make is made;
        // values that do not convert end in a usage error, which is fine here.
        var args = ParsedArguments()
        args.declared = Set(readable.map(\.long))
        args.undeclaredReads = log
        for spec in readable {
            if spec.isFlag { args.flags.insert(spec.long) } else { args.values[spec.long] = ["1"] }
        }
        args.positionals = node.config.arguments.map { _ in "x" }
        _ = try? node.command.init(args)
        #expect(log.all.isEmpty, "\(path.joined(separator: " ")) reads \(log.all.map { "--" + $0 }) without declaring it")
    }

    /// The check itself: a read of an option the command does not declare is caught.
    @Test func anUndeclaredReadIsCaught() {
        let log = UndeclaredReads()
        var args = ParsedArguments()
        args.declared = ["device"]
        args.undeclaredReads = log
        args.values["wait"] = ["5"]
        #expect((try? args.value(CommonOptions.wait)) == nil)
        #expect(log.all == ["wait"])
    }
}
