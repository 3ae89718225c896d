import FeliCaEmulators
import FeliCaSimulation
import Foundation
import Testing
import FeliCaCards

@Test(arguments: [
    ["poll", "--json"], ["poll"], ["dump"], ["dump", "--json"], ["read", "--service", "090f", "--blocks", "0-2"],
    ["read", "--service", "1317", "--system", "fe00", "--json"], ["poll", "--system-code", "fe00", "--json"],
])
func goldenOnTheFixtureCard(_ args: [String]) throws {
    let r = try run(args + ["--device", "virtual:" + fixture("two-system.json")])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.isEmpty, "\(r.stderr)")
    try expectGolden(r.stdout, args.joined(separator: "_").replacingOccurrences(of: "-", with: "") + ".txt")
}

@Test(arguments: ["poll", "dump", "read", "devices", "balance"])
func helpFollowsTheHouseLayout(_ command: String) throws {
    let r = try run([command, "--help"])
    #expect(r.status == 0)
    #expect(r.stdout.hasPrefix("OVERVIEW: "))
    #expect(r.stdout.contains("\nUSAGE: felica \(command)"))
    #expect(r.stdout.contains("\nOPTIONS:\n"))
    #expect(r.stdout.contains("  -h, --help"))
    #expect(try run(["help", command]).stdout == r.stdout)
}

@Test func pollHelpGolden() throws {
    try expectGolden(try run(["poll", "-h"]).stdout, "help_poll.txt")
    try expectGolden(try run(["--help"]).stdout, "help.txt")
}

@Test func versionPrints() throws {
    let r = try run(["--version"])
    #expect(r.status == 0)
    #expect(r.stdout.split(separator: ".").count == 3)
}

@Test(arguments: [
    (["poll", "--bogus"], "Error: unknown option '--bogus'"),
    (["read"], "Error: missing required option '--service'"),
    (["read", "--service", "zz"], "Error: option '--service': \"zz\" is not a service code"),
    (["read", "--service", "090f", "--blocks", "5-2"], "Error: option '--blocks'"),
    (["poll", "--device", "floppy:0"], "Error: --device 'floppy:0': 'floppy' is not a kind of device"),
    (["poll", "--device", "virtual:"], "Error: --device 'virtual:': nothing after 'virtual:': name a card"),
    (["frobnicate"], "Error: unknown command 'frobnicate'"),
    (["poll", "extra"], "Error: unexpected argument 'extra'"),
    (["poll", "--json=yes"], "Error: option '--json' takes no value"),
] as [([String], String)])
func usageErrorsExit64WithTheUsageLine(_ args: [String], _ message: String) throws {
    let r = try run(args)
    #expect(r.status == 64)
    #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
    #expect(r.stderr.contains("\nUsage: felica"))
    #expect(r.stdout.isEmpty)
}

@Test func corruptImageGivesOneClearLine() throws {
    let path = temporaryPath("corrupt.json")
    try #"{"format":"felica-card/1","systems":[{"code":"0003","services":[{"code":"008b","blocks":["abc"]}]}]}"#
        .write(toFile: path, atomically: true, encoding: .utf8)
    let r = try run(["poll", "--device", "virtual:" + path])
    #expect(r.status == 1)
    #expect(r.stderr == "Error: card image \(path): $.systems[0].services[0].blocks[0]: \"abc\" is too short: expected 16 bytes (32 hex digits), found 3 digits\n")
    let missing = try run(["poll", "--device", "virtual:/no/such/card.json"])
    #expect(missing.status == 1)
    #expect(missing.stderr.hasPrefix("Error: card image /no/such/card.json: cannot open (No such file or directory)"))
}

@Test func aCardWithoutTheSystemIsNotNoCard() throws {
    let r = try run(["poll", "--system-code", "1234", "--device", "virtual:" + fixture("two-system.json")])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("a card is on virtual:"), "\(r.stderr)")
    #expect(r.stderr.contains("but it has no system 1234 matching the Polling: its systems are 0003 (transit IC), FE00 (common area)"), "\(r.stderr)")
    #expect(r.stdout.isEmpty)
}

@Test(arguments: SampleCards.names)
func dumpJSONRoundTripsThroughVirtualImage(_ name: String) throws {
    let first = try run(["dump", "--device", "virtual:\(name)", "--json"])
    #expect(first.status == 0, "\(first.stderr)")
    let path = temporaryPath("\(name).json")
    try first.stdout.write(toFile: path, atomically: true, encoding: .utf8)
    let second = try run(["dump", "--device", "virtual:\(path)", "--json"])
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stdout == first.stdout)
}

@Test func dumpImageOfTheFixtureIsTheFixture() throws {
    let r = try run(["dump", "--device", "virtual:" + fixture("two-system.json"), "--json"])
    let fixtureText = try String(contentsOfFile: fixture("two-system.json"), encoding: .utf8)
    #expect(r.stdout == fixtureText)
}

@Test func dumpOutputFileIsWrittenWhole() throws {
    let path = temporaryPath("out.json")
    try "old".write(toFile: path, atomically: true, encoding: .utf8)
    let r = try run(["dump", "--device", "virtual:" + fixture("two-system.json"), "--json", "--output", path])
    #expect(r.status == 0)
    #expect(r.stdout.isEmpty)
    let written = try String(contentsOfFile: path, encoding: .utf8)
    let expected = try String(contentsOfFile: fixture("two-system.json"), encoding: .utf8)
    #expect(written == expected)
    let failed = try run(["dump", "--device", "virtual:/no/card.json", "--json", "--output", path])
    #expect(failed.status == 1)
    #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("{"))  // untouched
}

@Test func devicesListsTheVirtualCards() throws {
    let r = try run(["devices", "--json"])
    #expect(r.status == 0)
    for name in SampleCards.names { #expect(r.stdout.contains("\"virtual:\(name)\"")) }
}

@Test func virtualTimingOptionIsAccepted() throws {
    let r = try run(["poll", "--json", "--device", "virtual:" + fixture("two-system.json") + "?timing=424"])
    #expect(r.status == 0, "\(r.stderr)")
    let bad = try run(["poll", "--device", "virtual:suica?timing=100"])
    #expect(bad.status == 64)
}
