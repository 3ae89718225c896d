import FeliCaDelivery
import FeliCaJSON
import FeliCaFiles
import FeliCaTransportSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `watch --post`, `--mqtt` and `--exec`: the options, and where each reading goes besides
/// standard output.
struct DeliveryOptions: Sendable {
    static let post = Option(OptionSpec(
        "post", value: "url", help: "POST each reading as JSON (the --json object plus a unique \"id\") to this http:// or https:// URL; kept in the spool until the server answers 2xx.")) { s throws(UsageError) in
        do throws(DeliveryError) { _ = try HTTPDestination(url: s) } catch { throw UsageError("option '--post': \(error.reason)") }
        return s
    }
    static let postTokenFile = Option(OptionSpec(
        "post-token-file", value: "file", help: "Send the token in this file (one line) as 'Authorization: Bearer <token>' with each POST.", kind: .file))
    static let postHeader = Option(OptionSpec(
        "post-header", value: "header", help: "Send this 'Name: value' header with each POST (repeatable).", repeatable: true)) { s throws(UsageError) in
        guard let colon = s.firstIndex(of: ":"), colon != s.startIndex, !s.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw UsageError("option '--post-header': \"\(s)\" is not 'Name: value'")
        }
        return s
    }
    static let mqtt = Option(OptionSpec(
        "mqtt", value: "url", help: "Publish each reading with QoS 1 to mqtt://[user@]host[:port]/<topic>; the reader's state, retained, on <topic>/status.")) { s throws(UsageError) in
        do throws(DeliveryError) { return try MQTTAddress(parsing: s) } catch { throw UsageError("option '--mqtt': \(ErrorHints.message(error))") }
    }
    static let mqttPasswordFile = Option(OptionSpec(
        "mqtt-password-file", value: "file", help: "The password of the --mqtt user, in this file (one line).", kind: .file))
    static let exec = Option(OptionSpec(
        "exec", value: "command", help: "Run this shell command for each reading: its JSON on standard input, FELICA_IDM, FELICA_EVENT, FELICA_ID ... in the environment; one at a time."))
    static let execTimeout = Option.seconds(OptionSpec(
        "exec-timeout", value: "seconds", help: "End an --exec command that runs longer than this (default 10)."), in: 0.1...3600)
    static let spool = Option(OptionSpec(
        "spool", value: "dir", help: "Keep readings for --post and --mqtt here until delivered (default: beside the --save database, else $XDG_STATE_HOME/felica/spool or ~/.local/state/felica/spool).",
        kind: .directory))
    static let spoolMax = Option.int(OptionSpec(
        "spool-max", value: "n", help: "Keep at most <n> undelivered readings per destination (default 10000); a reading that does not fit is dropped, and said."), in: 1...10_000_000)

    static let specs: [OptionSpec] = [post.spec, postTokenFile.spec, postHeader.spec, mqtt.spec, mqttPasswordFile.spec,
                                      exec.spec, execTimeout.spec, spool.spec, spoolMax.spec]

    var post: String?
    var headers: [String]
    var tokenFile: String?
    var mqtt: MQTTAddress?
    var passwordFile: String?
    var exec: String?
    var execTimeout: Duration
    var spool: String?
    var spoolMax: Int

    init(_ args: ParsedArguments) throws(UsageError) {
        post = try args.value(Self.post)
        headers = try args.values(Self.postHeader)
        tokenFile = try args.value(Self.postTokenFile)
        mqtt = try args.value(Self.mqtt)
        passwordFile = try args.value(Self.mqttPasswordFile)
        exec = try args.value(Self.exec)
        execTimeout = try args.value(Self.execTimeout) ?? .seconds(10)
        spool = try args.value(Self.spool)
        spoolMax = try args.value(Self.spoolMax) ?? 10_000
        if post == nil && (tokenFile != nil || !headers.isEmpty) { throw UsageError("options '--post-token-file' and '--post-header' need --post") }
        if mqtt == nil && passwordFile != nil { throw UsageError("option '--mqtt-password-file' needs --mqtt") }
        if passwordFile != nil && mqtt?.user == nil { throw UsageError("option '--mqtt-password-file' needs a user in --mqtt (mqtt://user@host/topic)") }
        if exec == nil && args.values[Self.execTimeout.spec.long] != nil { throw UsageError("option '--exec-timeout' needs --exec") }
        if post == nil && mqtt == nil && (spool != nil || args.values[Self.spoolMax.spec.long] != nil) {
            throw UsageError("options '--spool' and '--spool-max' need --post or --mqtt")
        }
    }

    /// Whether any reading goes anywhere besides standard output.
    var any: Bool { post != nil || mqtt != nil || exec != nil }
}

/// Where each reading of a watch goes besides standard output: an ``Outbox`` per
/// destination (spooled, delivered in order, retried) and the `--exec` command.
final class WatchDelivery: Sendable {
    let outboxes: [Outbox]
    let hook: CommandHook?
    private let runs: [Task<Void, Never>]
    private let console: Console

    /// How long an ending watch waits for what is spooled to be delivered, at most.
    static let finishWait: Duration = .seconds(10)

    /// Opens the spools and starts delivering what they hold (readings left by an earlier
    /// watch first). `database`: the `--save` database, beside which the spool goes by default.
    init(_ options: DeliveryOptions, database: String?, console: Console) throws {
        self.console = console
        var outboxes: [Outbox] = []
        if options.post != nil || options.mqtt != nil {
            let root = try options.spool ?? Self.defaultSpool(database: database)
            func report(_ what: String) -> @Sendable (Outbox.Event) -> Void {
                { event in
                    switch event {
                    case .delivered: break
                    case .failing(let reason, let waiting):
                        console.diag("\(what): not delivered: \(reason); \(waiting) reading\(waiting == 1 ? "" : "s") kept in the spool, trying again")
                    case .recovered(let waiting):
                        console.diag("\(what): delivering again" + (waiting > 0 ? " (\(waiting) still waiting)" : ""))
                    case .spoolFailed(let error):
                        console.diag("\(what): \(error.reason)")
                    }
                }
            }
            if let url = options.post {
                var headers = options.headers
                if let file = options.tokenFile { headers.append("Authorization: Bearer " + (try Self.secret(file, for: "--post-token-file"))) }
                let destination = try HTTPDestination(url: url, headers: headers)
                let spool = try Spool(directory: root + "/http", limit: options.spoolMax)
                outboxes.append(Outbox(spool: spool, destination: destination, onEvent: report("--post \(url)")))
            }
            if let address = options.mqtt {
                let password = try options.passwordFile.map { file throws in try Self.secret(file, for: "--mqtt-password-file") }
                let destination = try MQTTDestination(address: address, password: password)
                let spool = try Spool(directory: root + "/mqtt", limit: options.spoolMax)
                outboxes.append(Outbox(spool: spool, destination: destination, onEvent: report("--mqtt \(address)")))
            }
            for outbox in outboxes where outbox.spool.count > 0 {
                console.diag("\(outbox.destination.name): \(outbox.spool.count) reading\(outbox.spool.count == 1 ? "" : "s") left by an earlier watch in \(outbox.spool.directory), delivering them first")
            }
        }
        self.outboxes = outboxes
        runs = outboxes.map { outbox in Task { await outbox.run() } }
        hook = options.exec.map { command in
            CommandHook(command: command, limit: options.execTimeout) { outcome in
                let card = outcome.environment["FELICA_IDM"].map { " for card \($0)" } ?? ""
                switch outcome.kind {
                case .succeeded: break
                case .failed(let ending):
                    let how: String
                    switch ending {
                    case .exited(let code): how = "exited with status \(code)"
                    case .signalled(let signal): how = "was ended by signal \(signal)"
                    }
                    console.diag("--exec command\(card) \(how)")
                case .timedOut:
                    console.diag("--exec command\(card) ran longer than \(options.execTimeout) and was ended")
                case .notStarted(let why):
                    console.diag("--exec command\(card) could not be started: \(why)")
                case .dropped:
                    console.diag("--exec command\(card) not run: \(CommandHook.maximumQueued) runs are already waiting for the one before to end")
                }
            }
        }
    }

    /// The spool's default place: `spool` beside the database, else under the user's
    /// state directory.
    static func defaultSpool(database: String?) throws -> String {
        if let database {
            let dir = database.lastIndex(of: "/").map { String(database[..<$0]) } ?? "."
            return (dir.isEmpty ? "/" : dir) + "/spool"
        }
        if let state = getenv("XDG_STATE_HOME").map({ String(cString: $0) }), state.hasPrefix("/") { return state + "/felica/spool" }
        if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty { return home + "/.local/state/felica/spool" }
        throw CLIError("no place for the spool: neither XDG_STATE_HOME nor HOME is set; give --spool DIR")
    }

    /// The one line of a token or password file, without its line end.
    static func secret(_ path: String, for option: String) throws -> String {
        let text: String
        switch SystemCalls.readText(path) {
        case .success(let t): text = t
        case .failure(let f): throw CLIError("\(option) \(path): \(f.reason)")
        }
        var line = Substring(text)
        while let last = line.last, last == "\n" || last == "\r" { line = line.dropLast() }
        guard !line.isEmpty else { throw CLIError("\(option) \(path) is empty") }
        guard !line.contains(where: { $0 == "\n" || $0 == "\r" || $0 == "\0" }) else {
            throw CLIError("\(option) \(path) holds more than one line: put the token alone on one line")
        }
        return String(line)
    }

    /// A reading: the `--json` line given an `id` (and when it was read); spooled for each
    /// destination and given to the command. Returns once it is on disk, with the line
    /// led by the id.
    func reading(_ line: JSONObject, idm: String, device: String) -> JSONObject {
        let id = Self.newID()
        var message: [(String, JSONValue)] = [("id", .string(id)), ("event", .string("card")), ("readAt", .string(HistoryOptions.now())),
                                              ("device", .string(device))]
        message += line.members.filter { !["id", "event", "readAt", "device"].contains($0.key) }.map { ($0.key, $0.value) }
        let body = Array(JSONValue.object(JSONObject(message)).serialized().utf8)
        for outbox in outboxes {
            do {
                if try !outbox.add(body) {
                    console.diag("\(outbox.destination.name): the spool \(outbox.spool.directory) is full (\(outbox.spool.limit) readings, --spool-max): the reading \(id) of card \(idm) is dropped for this destination")
                }
            } catch {
                console.diag("\(outbox.destination.name): the reading \(id) of card \(idm) could not be spooled: \(error.reason)")
            }
        }
        hook?.run(input: body + [0x0A], environment: ["FELICA_EVENT": "card", "FELICA_IDM": idm, "FELICA_ID": id, "FELICA_DEVICE": device])
        return JSONObject([("id", .string(id))] + line.members.filter { $0.key != "id" }.map { ($0.key, $0.value) })
    }

    /// The reader left or came back: said to the MQTT status topic and to the command.
    func readerState(_ state: ReaderState, device: String) async {
        for outbox in outboxes { await outbox.readerState(state) }
        if let hook, state != .offline {
            let event = state == .online ? "readerBack" : "readerLost"
            let body = Array(JSONValue.object(["event": .string(event), "device": .string(device)]).serialized().utf8) + [0x0A]
            hook.run(input: body, environment: ["FELICA_EVENT": event, "FELICA_DEVICE": device])
        }
    }

    /// When the watch ends: waits (up to ``finishWait``) for the spools to empty and for
    /// the commands queued to end, says what is left, and closes.
    func finish() async {
        let deadline = ContinuousClock.now + Self.finishWait
        var said = false
        while ContinuousClock.now < deadline, outboxes.contains(where: { $0.spool.count > 0 }) {
            if !said, outboxes.contains(where: \.isFailing) {
                let waiting = outboxes.reduce(0) { $0 + $1.spool.count }
                console.diag("waiting up to \(Self.finishWait) for \(waiting) reading\(waiting == 1 ? "" : "s") to be delivered before ending")
                said = true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        if let hook {
            let left = await hook.finish(until: deadline)
            if left > 0 { console.diag("--exec: \(left) command\(left == 1 ? "" : "s") still queued or running when watch ended") }
        }
        for outbox in outboxes {
            let left = outbox.spool.count
            if left > 0 {
                console.diag("\(outbox.destination.name): \(left) reading\(left == 1 ? "" : "s") not delivered yet, kept in \(outbox.spool.directory): the next felica watch with the same spool delivers \(left == 1 ? "it" : "them")")
            }
        }
        for run in runs { run.cancel() }
        for outbox in outboxes { await outbox.close() }
    }

    /// 128 random bits as a UUID (version 4): unique per reading, the same on every try.
    static func newID() -> String {
        // The system's generator: getrandom(2), unpredictable across processes and reboots.
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { String($0 >> 4, radix: 16) + String($0 & 0xF, radix: 16) }.joined()
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }
}
