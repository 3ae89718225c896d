/// Every `felica` subcommand, in help order. Add new commands here.
enum FelicaCommands {
    static var all: [any CLICommand.Type] {
        [
            DevicesCommand.self,
            PollCommand.self,
            DumpCommand.self,
            ReadCommand.self,
            BalanceCommand.self,
            HistoryCommand.self,
            WatchCommand.self,
            OrderCommand.self,
            BenchCommand.self,
            TraceCommand.self,
            DoctorCommand.self,
        ]
    }
}

/// Every `felica-sim` subcommand. Add new stand-ins here.
enum FelicaSimCommands {
    static var all: [any CLICommand.Type] {
        [
            PN532SimCommand.self,
            VPCDSimCommand.self,
            RCS380SimCommand.self,
        ]
    }
}
