/// Options the reader emulators of `felica-sim` share.
enum SimOptions {
    /// `--card` or `--no-card`, exactly one of them: the card's name, nil for an empty field.
    static func card(_ args: ParsedArguments) throws(UsageError) -> String? {
        let card = args.value("card")
        if args.flag("no-card") {
            guard card == nil else { throw UsageError("--card and --no-card contradict each other: choose one") }
        } else if card == nil {
            throw UsageError("missing required option '--card' (or --no-card for an empty field)")
        }
        return card
    }

    /// `--timing rf`: whether the emulator takes as long as the real hardware.
    static func timing(_ args: ParsedArguments) throws(UsageError) -> Bool {
        switch args.value("timing") {
        case nil: false
        case "rf"?: true
        case let other?: throw UsageError("option '--timing': \"\(other)\" is not a timing model (rf)")
        }
    }
}
